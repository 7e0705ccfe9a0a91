#!/usr/bin/env python3
"""A deterministic synthetic corpus for the scale benchmark.

Usage: bench/synth.py PAGES OUT_DIR [HANDBOOK_PAGES_DIR]

Writes PAGES Markdown pages under OUT_DIR (1,000 per folder), made from the
TTS handbook's sections (../shared/corpora/tts-handbook/pages), recombined
and varied so that terms and numbers differ from page to page:
- a page takes 6 to 10 sections of random handbook pages, each under its
  own heading, and a title from one of them;
- every number is replaced by another of as many digits;
- about 5% of the longer words are replaced by a word of another section
  (the vocabulary's words, in other company), and about 2% by a coined
  word (syllables drawn at random: the vocabulary grows with the corpus, as
  product names and people's names make it grow in real documents).
Page i depends on i alone (its own seeded generator), so the pages of a
smaller corpus are the first pages of a larger one. Standard library only.
"""

import os
import random
import re
import sys

SYLLABLES = [
    "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "ba", "do", "fi",
    "gu", "ha", "je", "ki", "ma", "no", "pe", "qu", "ri", "so", "tu", "va",
    "wi", "xe", "yo", "zu", "tr", "st", "pl", "gr",
]
WORD = re.compile(r"[A-Za-z]{4,}")
NUMBER = re.compile(r"\d+")


def sections(pages_dir):
    """(heading, body) of every section of the handbook with some text."""
    out = []
    for root, _, files in sorted(os.walk(pages_dir)):
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            text = open(os.path.join(root, name), encoding="utf-8").read()
            if text.startswith("---"):
                end = text.find("\n---", 3)
                text = text[end + 4:] if end >= 0 else text
            text = re.sub(r"\{%.*?%\}|\{\{.*?\}\}", " ", text, flags=re.S)
            heading, body = None, []
            for line in text.splitlines() + ["# end"]:
                if line.startswith("#"):
                    content = "\n".join(body).strip()
                    if heading and len(content) > 200:
                        out.append((heading, content))
                    heading, body = line.lstrip("#").strip(), []
                else:
                    body.append(line)
    return out


def vary(text, rng, vocabulary):
    text = NUMBER.sub(lambda m: str(rng.randrange(10 ** (len(m.group()) - 1) if len(m.group()) > 1 else 0, 10 ** len(m.group()))), text)

    def word(m):
        r = rng.random()
        if r < 0.05:
            return rng.choice(vocabulary)
        if r < 0.07:
            return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        return m.group()

    return WORD.sub(word, text)


def main():
    n = int(sys.argv[1])
    out_dir = sys.argv[2]
    pages_dir = sys.argv[3] if len(sys.argv) > 3 else "../shared/corpora/tts-handbook/pages"
    pool = sections(pages_dir)
    vocabulary = sorted({w.lower() for _, body in pool for w in WORD.findall(body)})
    for i in range(n):
        rng = random.Random(f"groundcite-synth-{i}")
        chosen = [pool[rng.randrange(len(pool))] for _ in range(rng.randint(6, 10))]
        title = vary(chosen[0][0], rng, vocabulary)
        parts = [f"---\ntitle: {title!r}\n---\n"]
        for heading, body in chosen:
            parts.append(f"## {vary(heading, rng, vocabulary)}\n\n{vary(body, rng, vocabulary)}\n")
        folder = os.path.join(out_dir, f"d{i // 1000:04d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"page-{i:07d}.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(parts))
    print(f"{n} pages from {len(pool)} handbook sections written to {out_dir}")


if __name__ == "__main__":
    main()
