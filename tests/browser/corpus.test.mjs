// Drives headless Chromium against the real binary, `groundcite serve`, as
// started by run.sh (phase 2):
//
// - BASE_URL: `--generator scripted` over the demo corpus plus badges.md,
//   whose "Getting a badge" passage holds a literal
//   `<script>window.__xss=1</script>`. The scripted answer to QUESTION has
//   four sentences: supported (Your first week), supported (Getting a badge,
//   the injected passage), contradicted ($50 vs $15, Lost badges) and
//   unsupported (car park gates, Badges).
// - EXTRACTIVE_URL: `--generator extractive` over the embedded demo corpus
//   (empty default index, ingested on first use).
//
//   BASE_URL=... EXTRACTIVE_URL=... QUESTION=... SCREENSHOT_DIR=target/browser node corpus.test.mjs
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const BASE = process.env.BASE_URL || "http://127.0.0.1:8080";
const EXTRACTIVE = process.env.EXTRACTIVE_URL || "";
const QUESTION = process.env.QUESTION || "When do I get my office badge, and what should I do in my first week?";
const SHOTS = process.env.SCREENSHOT_DIR || "target/browser";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const XSS = "<script>window.__xss=1</script>";
mkdirSync(SHOTS, { recursive: true });

let failures = 0;
let passed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failures++;
    console.log(`FAIL ${name}${detail !== undefined ? `: ${JSON.stringify(detail)}` : ""}`);
  }
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1000, height: 1100 }, deviceScaleFactor: 1 });
  // No internet: the handbook's source pages are stubbed; only the URL opened is read.
  await context.route(/^https:\/\/handbook\.example\.com\//, (route) =>
    route.fulfill({ status: 200, contentType: "text/html", body: "<p>stub</p>" }));
  const page = await context.newPage();
  // A missing element fails its check within seconds, not after 30 s.
  page.setDefaultTimeout(5000);
  const problems = [];
  page.on("console", (m) => { if (m.type() === "error") problems.push(m.text()); });
  page.on("pageerror", (e) => problems.push(String(e)));
  return { context, page, problems };
}

// The text of the first match, or "" when nothing matches (no waiting).
async function textOf(locator) {
  return (await locator.count()) ? locator.first().innerText() : "";
}

// Runs `action` (which submits a question) and waits for its final report:
// a report other than the one shown before, the answer region no longer
// busy, the ask button enabled again.
async function answered(page, action) {
  await page.evaluate(() => { window.__before = window.groundcite.report(); });
  await action();
  await page.waitForFunction(() => {
    const r = window.groundcite.report();
    return r !== null && r !== window.__before
      && document.getElementById("answer").getAttribute("aria-busy") === "false"
      && !document.getElementById("ask-button").disabled;
  }, null, { timeout: 15000 });
}

// Submits the question (streaming, the page's default) and waits for the
// final report.
async function ask(page, question) {
  await answered(page, async () => {
    await page.fill("#question", question);
    await page.click("#ask-button");
  });
}

try {
  // ===== groundcite serve --generator scripted, demo corpus + injected page.
  {
    const { context, page, problems } = await newPage();
    const response = await page.goto(BASE + "/");
    check("[scripted] page loads with 200 from groundcite serve", response.status() === 200, response.status());
    check("[scripted] page has a content security policy", /script-src 'sha256-/.test(response.headers()["content-security-policy"] || ""));
    // Not the demo index (its own --index): none of the demo's words.
    const corpusLine = await textOf(page.locator("#corpus"));
    check("[scripted] the home page names the corpus: the index it serves", /^Searching .*index$/.test(corpusLine), corpusLine);
    check("[scripted] no demo example questions on another corpus", (await page.locator("button.example").count()) === 0);
    check("[scripted] the placeholder is not a demo question",
      (await page.getAttribute("#question", "placeholder")) === "Ask a question about the indexed documents");

    await ask(page, QUESTION);
    const report = await page.evaluate(() => window.groundcite.report());
    check("[scripted] the answer comes from the scripted generator", report.generator === "scripted", report.generator);
    const ids = (report.passages || []).map((p) => p.id);
    check("[scripted] passages come from the ingested demo corpus and the injected page",
      ids.some((id) => id.startsWith("onboarding.md#")) && ids.some((id) => id.startsWith("badges.md#")), ids);
    const counts = report.counts || {};
    check("[scripted] report counts 2 supported, 1 contradicted, 1 unsupported",
      counts.supported === 2 && counts.contradicted === 1 && counts.unsupported === 1, counts);

    const sentences = page.locator("#answer .sentence");
    check("[scripted] every sentence is rendered", (await sentences.count()) === 4, await sentences.count());
    const chips = page.locator("#answer button.chip");
    check("[scripted] citation chips render as buttons", (await chips.count()) === 4, await chips.count());
    check("[scripted] chips are type=button and none is invalid",
      (await page.locator("#answer button.chip[type=button]").count()) === 4
      && (await page.locator("#answer button.chip.invalid").count()) === 0);
    check("[scripted] no raw markers left in the text", !/\[\d+\]/.test(await page.locator("#answer").innerText()));

    const bannerText = await page.locator("#banner").innerText();
    check("[scripted] banner says needs review, never verified",
      (await page.locator("#banner.bad").count()) === 1 && /Needs review/.test(bannerText)
      && /1 sentence says something its source contradicts; 1 sentence is not stated by its source/.test(bannerText)
      && !/Checked\./.test(bannerText), bannerText);

    // Flagged sentences: marked, labelled, and their chips flagged too.
    const contradicted = page.locator("#answer .sentence.s-contradicted");
    check("[scripted] contradicted sentence marked", (await contradicted.count()) === 1
      && /replacement badge costs \$50/.test(await textOf(contradicted)));
    const cLabel = await textOf(page.locator("#answer .flag.contradicted"));
    check("[scripted] contradicted label gives the correct figure", /^The source says \$15, not \$50\.$/.test(cLabel), cLabel);
    const unsupported = page.locator("#answer .sentence.s-unsupported");
    check("[scripted] unsupported sentence marked", (await unsupported.count()) === 1
      && /car park gates/.test(await textOf(unsupported)));
    const uLabel = await textOf(page.locator("#answer .flag.unsupported"));
    check("[scripted] unsupported label names the missing words", /^The cited passage does not mention/.test(uLabel) && /car/.test(uLabel), uLabel);
    const styles = await page.evaluate(() => ["s-contradicted", "s-unsupported"].map((c) => {
      const e = document.querySelector("#answer .sentence." + c);
      return e ? getComputedStyle(e).textDecorationStyle : null;
    }));
    check("[scripted] flagged sentences have a wavy underline", styles.every((s) => s === "wavy"), styles);
    check("[scripted] chips of flagged sentences are flagged",
      (await page.locator("#answer .s-contradicted button.chip.on-contradicted").count()) === 1
      && (await page.locator("#answer .s-unsupported button.chip.on-unsupported").count()) === 1);

    // Supported sentences: no marking, no label, a quiet tick.
    const supported = page.locator("#answer .sentence[data-verdict='supported']");
    check("[scripted] two supported sentences", (await supported.count()) === 2, await supported.count());
    const supportedClean = await supported.evaluateAll((els) => els.every((e) =>
      !/\bs-/.test(e.className) && !e.querySelector(".flag")
      && !(e.nextElementSibling && e.nextElementSibling.classList.contains("flag"))));
    check("[scripted] supported sentences are not marked", supportedClean);
    check("[scripted] each supported sentence has a tick", (await page.locator("#answer .sentence[data-verdict='supported'] .tick").count()) === 2);
    check("[scripted] exactly two flags shown", (await page.locator("#answer .flag").count()) === 2);

    // Focusing a chip shows the evidence quote. Chips are found by their
    // sentence (by verdict and text), not by rank.
    const tip = page.locator("#tip");
    const weekChip = page.locator("#answer .sentence[data-verdict='supported']", { hasText: "security training" }).locator("button.chip");
    await weekChip.focus();
    await tip.waitFor({ state: "visible" });
    const tipWeek = await tip.innerText();
    check("[scripted] focusing a chip shows the evidence quote",
      /Complete the security training within your first 5 working days/.test(tipWeek) && /Your first week/.test(tipWeek), tipWeek);
    check("[scripted] chip is described by the tooltip", (await weekChip.getAttribute("aria-describedby")) === "tip");

    await contradicted.locator("button.chip").focus();
    const tipLost = await tip.innerText();
    check("[scripted] the contradicted sentence's chip quotes the passage and says otherwise",
      /A replacement badge costs \$15/.test(tipLost) && /says otherwise/.test(tipLost), tipLost);
    await unsupported.locator("button.chip").focus();
    const tipGates = await tip.innerText();
    check("[scripted] the unsupported sentence's chip says the passage does not state it",
      /does not state this/.test(tipGates), tipGates);
    await page.keyboard.press("Escape");
    check("[scripted] Escape hides the tooltip", await tip.isHidden());

    // The injected passage: its <script> shows as text and never runs.
    const badgeChip = page.locator("#answer .sentence[data-verdict='supported']", { hasText: "front desk" }).locator("button.chip");
    await badgeChip.focus();
    await tip.waitFor({ state: "visible" });
    const tipBadge = await tip.innerText();
    check("[scripted] <script> in a passage shows as text in the evidence tooltip", tipBadge.includes(XSS), tipBadge);
    check("[scripted] no script element inside the tooltip", (await tip.locator("script").count()) === 0);
    const sources = await page.locator("#sources").innerText();
    check("[scripted] <script> in a passage shows as text in the sources", sources.includes(XSS), sources);
    check("[scripted] window.__xss is undefined", (await page.evaluate(() => typeof window.__xss)) === "undefined");
    check("[scripted] no script element was injected", (await page.locator("script").count()) === 1);
    await page.screenshot({ path: join(SHOTS, "demo-corpus.png"), fullPage: true });

    // Clicking a chip opens the source at the quote.
    const [popup] = await Promise.all([context.waitForEvent("page"), weekChip.click()]);
    await popup.waitForLoadState("domcontentloaded").catch(() => {});
    const opened = popup.url();
    check("[scripted] chip opens the handbook page at the quote",
      opened.startsWith("https://handbook.example.com/onboarding/#your-first-week:~:text=Complete%20the%20security%20training%20within"), opened);
    await popup.close();

    check("[scripted] no CSP violations or page errors", problems.length === 0, problems);
    await context.close();
  }

  // ===== groundcite serve --generator extractive, embedded demo corpus.
  if (EXTRACTIVE) {
    const { context, page, problems } = await newPage();
    const response = await page.goto(EXTRACTIVE + "/");
    check("[extractive] page loads with 200", response.status() === 200, response.status());
    // The demo index: the home page names the demo corpus and offers its example questions.
    const corpusLine = await textOf(page.locator("#corpus"));
    check("[extractive] the home page names the corpus", corpusLine === "Searching Northwind Labs employee handbook (demo)", corpusLine);
    const examples = await page.locator("button.example").allInnerTexts();
    check("[extractive] the home page offers example questions", examples.length === 3 && examples[0] === "How long does reimbursement take?", examples);
    for (const width of [1280, 400]) {
      await page.setViewportSize({ width, height: 800 });
      await page.screenshot({ path: join(SHOTS, `home-${width}.png`), fullPage: true });
    }
    await page.setViewportSize({ width: 1000, height: 1100 });
    // One click on an example asks it.
    await answered(page, () => page.locator("button.example").first().click());
    check("[extractive] clicking an example question asks it",
      (await page.inputValue("#question")) === "How long does reimbursement take?"
      && (await page.evaluate(() => window.groundcite.report().question)) === "How long does reimbursement take?");
    const report = await page.evaluate(() => window.groundcite.report());
    check("[extractive] the answer comes from the extractive generator", report.generator === "extractive", report.generator);
    check("[extractive] passages come from the embedded demo corpus",
      (report.passages || []).some((p) => p.id.startsWith("expenses.md#")), (report.passages || []).map((p) => p.id));
    const chips = page.locator("#answer button.chip");
    check("[extractive] at least one citation chip", (await chips.count()) >= 1, await chips.count());
    await chips.first().focus();
    const tip = page.locator("#tip");
    await tip.waitFor({ state: "visible" });
    const quote = (await tip.locator("blockquote").innerText().catch(() => "")).trim();
    check("[extractive] focusing the chip shows a quote", quote.length > 0 && /30 days/.test(quote), quote);
    const bannerText = await page.locator("#banner").innerText();
    check("[extractive] the banner matches the report",
      report.grounded ? /Checked\./.test(bannerText) : !/Checked\./.test(bannerText), bannerText);
    await page.screenshot({ path: join(SHOTS, "demo-extractive.png"), fullPage: true });

    // Off topic: the documents do not cover it. Said plainly, with the
    // nearest topics the corpus does cover, each one click from an answer.
    await ask(page, "Can I bring my dog to the office?");
    const off = await page.evaluate(() => window.groundcite.report());
    check("[extractive] an off-topic question is refused", !!off.refusal, off.refusal);
    const offBanner = await page.locator("#banner").innerText();
    check("[extractive] the off-topic message says the documents do not cover it",
      /No answer\./.test(offBanner) && /do not cover this question/.test(offBanner), offBanner);
    const offBox = await page.locator("#refusal").innerText();
    check("[extractive] the refusal says it is not covered, gives the demo's hand-off, and names no model",
      /Not covered by the provided documents\./.test(offBox) && /contact People Ops/.test(offBox) && !/model/i.test(offBox), offBox);
    for (const width of [1280, 400]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: join(SHOTS, `off-topic-${width}.png`), fullPage: true });
    }
    await page.setViewportSize({ width: 1000, height: 1100 });
    const topics = page.locator("#refusal button.topic");
    const topicCount = await topics.count();
    check("[extractive] nearest topics are buttons", topicCount >= 1 && topicCount === (off.refusal.nearest_topics || []).length,
      { buttons: topicCount, topics: off.refusal.nearest_topics });
    if (topicCount) {
      const label = await topics.first().innerText();
      await answered(page, () => topics.first().click());
      check("[extractive] clicking a nearest topic asks about it",
        (await page.evaluate(() => window.groundcite.report().question)) === label, label);
    }
    check("[extractive] no CSP violations or page errors", problems.length === 0, problems);
    await context.close();
  }
} catch (error) {
  // A step that cannot run (an element never appeared) is a failure too.
  check("the test ran to the end", false, String(error && error.message || error).split("\n")[0]);
} finally {
  await browser.close();
}

console.log(`\n${passed} passed, ${failures} failed; screenshots in ${SHOTS}`);
process.exit(failures ? 1 : 0);
