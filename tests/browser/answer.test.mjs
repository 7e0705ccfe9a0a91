// Drives headless Chromium against a running groundcite server whose
// answerer is the static demo (crates/server/src/fake.rs): a passage holds
// `<script>window.__xss=1</script>`, the answer has supported, contradicted,
// unsupported and uncited sentences, and questions about furniture are
// refused at the gate.
//
//   BASE_URL=http://127.0.0.1:PORT SCREENSHOT_DIR=target/browser node answer.test.mjs
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const BASE = process.env.BASE_URL || "http://127.0.0.1:8080";
const SHOTS = process.env.SCREENSHOT_DIR || "target/browser";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
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

try {
  const context = await browser.newContext({ viewport: { width: 1000, height: 1100 }, deviceScaleFactor: 1 });
  // No internet: source pages are stubbed, and we only read the URL opened.
  await context.route(/^https:\/\/handbook\.example\//, (route) =>
    route.fulfill({ status: 200, contentType: "text/html", body: "<p>stub</p>" }));
  const page = await context.newPage();
  const problems = [];
  page.on("console", (m) => { if (m.type() === "error") problems.push(m.text()); });
  page.on("pageerror", (e) => problems.push(String(e)));

  const response = await page.goto(BASE + "/");
  check("page loads with 200", response.status() === 200, response.status());
  check("page has a content security policy", /script-src 'sha256-/.test(response.headers()["content-security-policy"] || ""));

  // --- Streaming answer: sentences appear one by one, then the final report.
  await page.fill("#question", "How long does reimbursement take?");
  await page.click("#ask-button");
  await page.waitForSelector("#answer[aria-busy='true'] .sentence", { timeout: 10000 });
  const partial = await page.locator("#answer .sentence").count();
  const finalCount = 5;
  check("streamed sentences appear before the final report", partial >= 1 && partial < finalCount, partial);
  await page.waitForSelector("#banner.bad", { timeout: 10000 });
  check("answer region is aria-live", (await page.getAttribute("#answer", "aria-live")) === "polite");
  check("final report renders every sentence", (await page.locator("#answer .sentence").count()) === finalCount);

  const chips = page.locator("#answer button.chip");
  check("citation chips render as buttons", (await chips.count()) === 4, await chips.count());
  check("no raw markers left in the text", !/\[\d+\]/.test(await page.locator("#answer").innerText()));

  const bannerText = await page.locator("#banner").innerText();
  check("banner never says verified when a sentence is flagged", /Needs review/.test(bannerText) && !/Checked\./.test(bannerText), bannerText);
  check("banner names the worst problem first: the contradiction",
    /^Needs review\.\s*1 sentence says something its source contradicts/.test(bannerText), bannerText);

  // Contradicted and unsupported sentences are marked, with a label.
  const contradicted = page.locator("#answer .sentence.s-contradicted");
  check("contradicted sentence marked", (await contradicted.count()) === 1 && /90 days/.test(await contradicted.innerText()));
  const cLabel = await page.locator("#answer .flag.contradicted").innerText();
  check("contradicted label gives the correct figure inline", /^The source says 60 days, not 90 days\.$/.test(cLabel), cLabel);
  const cTitle = await page.locator("#answer .flag.contradicted").getAttribute("title");
  check("the machine reason stays on demand (title)", /^number_mismatch: "90 days" vs "60 days"/.test(cTitle || ""), cTitle);
  const unsupported = page.locator("#answer .sentence.s-unsupported");
  check("unsupported sentence marked", (await unsupported.count()) === 1 && /penalty/.test(await unsupported.innerText()));
  const uLabel = await page.locator("#answer .flag.unsupported").innerText();
  check("unsupported label says what the source does not mention", /^The cited passage does not mention/.test(uLabel), uLabel);
  const underline = await unsupported.evaluate((e) => getComputedStyle(e).textDecorationStyle);
  check("unsupported sentence has a wavy underline", underline === "wavy", underline);
  check("uncited sentence marked", (await page.locator("#answer .sentence.s-uncited").count()) === 1);

  // A quiet tick on each supported sentence, none on the others.
  const ticks = await page.locator("#answer .sentence .tick").evaluateAll((els) =>
    els.map((e) => e.closest(".sentence").dataset.verdict));
  check("supported sentences carry a tick, and only they", ticks.length >= 1 && ticks.every((v) => v === "supported"), ticks);
  // Every flag sits inside its own sentence, glued to its last word: on the
  // line where that word ends, never alone at the start of the next line.
  const glued = await page.evaluate(() => [...document.querySelectorAll("#answer .flag")].map((f) => {
    const tail = f.parentElement;
    const sentence = tail && tail.closest(".sentence");
    const word = tail && tail.firstChild;
    const range = document.createRange();
    if (word) range.selectNodeContents(word);
    const w = word ? [...range.getClientRects()].pop() : null;
    const r = f.getBoundingClientRect();
    return { inSentence: !!sentence && tail.classList.contains("tail"), sameLine: !!w && Math.abs(w.bottom - r.bottom) < r.height };
  }));
  check("each flag is attached to its sentence", glued.length === 3 && glued.every((g) => g.inSentence && g.sameLine), glued);
  check("the legend shows when something is flagged", await page.locator("#legend").isVisible());
  // The same at 1280 px and at a phone's 400 px: every flag stays on the
  // line of its sentence's last word.
  for (const width of [1280, 400]) {
    await page.setViewportSize({ width, height: 1100 });
    const sameLine = await page.evaluate(() => [...document.querySelectorAll("#answer .flag")].every((f) => {
      const range = document.createRange();
      range.selectNodeContents(f.parentElement.firstChild);
      const w = [...range.getClientRects()].pop();
      const r = f.getBoundingClientRect();
      return !!w && r.top < w.bottom && w.top < r.bottom;
    }));
    check(`flags stay on their sentence's line at ${width} px`, sameLine);
    await page.screenshot({ path: join(SHOTS, `answer-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1000, height: 1100 });

  // Focusing a chip shows the evidence quote.
  await chips.nth(0).focus();
  const tip = page.locator("#tip");
  await tip.waitFor({ state: "visible" });
  const tipText = await tip.innerText();
  check("focusing a chip shows the evidence quote", /Reimbursements settle within 30 days of approval/.test(tipText), tipText);
  check("chip is described by the tooltip", (await chips.nth(0).getAttribute("aria-describedby")) === "tip");
  await page.screenshot({ path: join(SHOTS, "answer.png"), fullPage: true });

  // Keyboard: Tab moves to the next chip, Escape hides the tooltip.
  await page.keyboard.press("Tab");
  check("Tab reaches the next chip", await chips.nth(1).evaluate((e) => e === document.activeElement));
  const tip2 = await tip.innerText();
  check("the contradicted sentence's chip says the passage says otherwise", /60 days/.test(tip2) && /says otherwise/.test(tip2), tip2);
  await page.keyboard.press("Escape");
  check("Escape hides the tooltip", await tip.isHidden());

  // The passage holding <script> renders as text and never runs.
  await chips.nth(3).hover();
  await tip.waitFor({ state: "visible" });
  const tip4 = await tip.innerText();
  check("<script> in a passage shows as text in the tooltip", tip4.includes("<script>window.__xss=1</script>"), tip4);
  const sources = await page.locator("#sources").innerText();
  check("<script> in a passage shows as text in the sources", sources.includes("<script>window.__xss=1</script>"));
  check("markup in a section label shows as text", sources.includes("Help <b>desk</b>"));
  check("window.__xss is undefined", (await page.evaluate(() => typeof window.__xss)) === "undefined");
  check("no script element was injected", (await page.locator("script").count()) === 1);

  // Clicking a chip opens the source at the quote (text fragment).
  const [popup] = await Promise.all([context.waitForEvent("page"), chips.nth(0).click()]);
  await popup.waitForLoadState("domcontentloaded").catch(() => {});
  const opened = popup.url();
  check(
    "chip opens the source url with a text fragment after its #anchor",
    opened === "https://handbook.example/expenses#reimbursement:~:text=Reimbursements%20settle%20within%2030%20days%20of%20approval",
    opened,
  );
  await popup.close();
  const frag = await page.evaluate(() => [
    window.groundcite.fragmentUrl("https://x.example/a", "Claims settle in 30 days."),
    window.groundcite.fragmentUrl("javascript:alert(1)", "x"),
    window.groundcite.fragmentUrl("https://x.example/a#top", "one two three four five six seven eight nine ten eleven twelve"),
  ]);
  check("text fragment without an anchor", frag[0] === "https://x.example/a#:~:text=Claims%20settle%20in%2030%20days", frag[0]);
  check("non-http urls are never opened", frag[1] === null, frag[1]);
  check("long quotes use start,end", frag[2] === "https://x.example/a#top:~:text=one%20two%20three%20four%20five,eight%20nine%20ten%20eleven%20twelve", frag[2]);

  // --- Refusal view (non-streaming request).
  await page.uncheck("#stream");
  await page.fill("#question", "Is home office furniture covered?");
  await page.click("#ask-button");
  await page.waitForSelector("#refusal:not(.hidden)", { timeout: 10000 });
  const refusal = await page.locator("#refusal").innerText();
  check("refusal shows what was searched", /Searched\s+Is home office furniture covered\?/.test(refusal), refusal);
  check("refusal shows the nearest topics", /Nearest topics/.test(refusal) && refusal.includes("Expenses › Reimbursement"), refusal);
  check("refusal shows the hand-off line", /Ask the finance help desk/.test(refusal), refusal);
  check("refusal banner is not a verified answer", /No answer/.test(await page.locator("#banner").innerText()));
  check("the refusal never says a model found nothing when no model ran", !/model/i.test(refusal), refusal);
  check("no legend on a refusal", await page.locator("#legend").isHidden());
  check("no chips on a refusal", (await page.locator("#answer button.chip:visible").count()) === 0);
  await page.screenshot({ path: join(SHOTS, "refusal.png"), fullPage: true });
  // A nearest topic is one click from an answer about it.
  const topic = page.locator("#refusal button.topic", { hasText: "Expenses › Reimbursement" });
  check("nearest topics are clickable", (await topic.count()) === 1);
  await topic.click();
  await page.waitForSelector("#refusal.hidden", { state: "attached", timeout: 10000 });
  check("clicking a topic asks about it", (await page.inputValue("#question")) === "Expenses › Reimbursement"
    && (await page.locator("#answer .sentence").count()) > 0, await page.inputValue("#question"));

  // --- "Doesn't answer": the passages found are on the subject, none answers it.
  await page.fill("#question", "Is there parking at the office?");
  await page.click("#ask-button");
  await page.waitForFunction(() => /No direct answer/.test(document.getElementById("banner").innerText), null, { timeout: 10000 });
  const direct = await page.locator("#refusal").innerText();
  check("a question the sources do not answer says so plainly",
    /The sources found don't answer this directly\./.test(direct)
    && /No direct answer\./.test(await page.locator("#banner").innerText()), direct);
  check("it lists the closest passages, linked",
    /Closest passages/.test(direct) && (await page.locator("#refusal a[href^='https://handbook.example/expenses']").count()) === 2, direct);
  check("no answer text, no chips, no legend",
    await page.locator("#answer").isHidden() && await page.locator("#legend").isHidden());
  for (const width of [1280, 400]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: join(SHOTS, `no-direct-answer-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1000, height: 1100 });

  // --- Check tab: the contract's contradicted example.
  await page.click("#tab-check");
  await page.click("#check-button");
  await page.waitForSelector("#answer .sentence.s-contradicted", { timeout: 10000 });
  const checkLabel = await page.locator("#answer .flag.contradicted").innerText();
  check("check tab flags the contradicted 14-day answer with the correct figure", /^The source says 30 days, not 14 days\.$/.test(checkLabel), checkLabel);

  // A clean answer: ticks, no flag, no legend, "Checked."
  await page.fill("#check-answer", "Reimbursements settle within 30 days of approval [2].");
  await page.click("#check-button");
  await page.waitForSelector("#banner.ok", { timeout: 10000 });
  check("a clean answer has a tick and no flag",
    (await page.locator("#answer .tick").count()) === 1 && (await page.locator("#answer .flag").count()) === 0);
  check("no legend when nothing is flagged", await page.locator("#legend").isHidden());
  check("the placeholder is not the demo's question",
    !/reimbursement/i.test(await page.getAttribute("#question", "placeholder")));
  await page.screenshot({ path: join(SHOTS, "check.png"), fullPage: true });

  // --- A phone (400 px, touch, no hover): a tap on a chip opens its quote
  // card, inside the screen, with a link to the source; it does not leave
  // the page. A tap elsewhere closes it.
  {
    const phone = await browser.newContext({ viewport: { width: 400, height: 900 }, hasTouch: true, isMobile: true, deviceScaleFactor: 1 });
    await phone.route(/^https:\/\/handbook\.example\//, (route) =>
      route.fulfill({ status: 200, contentType: "text/html", body: "<p>stub</p>" }));
    const mobile = await phone.newPage();
    const mobileProblems = [];
    mobile.on("pageerror", (e) => mobileProblems.push(String(e)));
    await mobile.goto(BASE + "/");
    await mobile.uncheck("#stream");
    await mobile.fill("#question", "How long does reimbursement take?");
    await mobile.tap("#ask-button");
    await mobile.waitForSelector("#banner.bad", { timeout: 10000 });
    let opened = false;
    phone.on("page", () => { opened = true; });
    await mobile.tap("#answer button.chip >> nth=0");
    const card = mobile.locator("#tip");
    await card.waitFor({ state: "visible" });
    const cardText = await card.innerText();
    check("a tap on a chip opens the quote card on a phone", /Reimbursements settle within 30 days of approval/.test(cardText), cardText);
    const box = await card.boundingBox();
    check("the quote card fits the 400 px screen", !!box && box.x >= 0 && box.x + box.width <= 400, box);
    const link = await card.locator("a.t-open").getAttribute("href");
    check("the card links to the source at the quote", /^https:\/\/handbook\.example\/expenses#reimbursement:~:text=/.test(link || ""), link);
    await mobile.waitForTimeout(300);
    check("the tap does not leave for the source", !opened);
    await mobile.screenshot({ path: join(SHOTS, "answer-touch-400.png"), fullPage: true });
    await mobile.tap("#banner");
    check("a tap elsewhere closes the card", await card.isHidden());
    check("no page errors on the phone", mobileProblems.length === 0, mobileProblems);
    await phone.close();
  }

  const csp = problems.filter((p) => /Content Security Policy|Refused to/.test(p));
  check("no CSP violations or page errors", problems.length === 0, problems);
  void csp;
} finally {
  await browser.close();
}

console.log(`\n${passed} passed, ${failures} failed; screenshots in ${SHOTS}`);
process.exit(failures ? 1 : 0);
