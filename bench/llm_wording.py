#!/usr/bin/env python3
"""Measures the citation contract's wording on a real model: for each variant of the rules, in free-text and structured modes, asks
the model at BASE_URL the answerable questions of questions-dev.jsonl over
the passages groundcite retrieves for them, and scores each reply with
`groundcite check` (ids never sent, unmarked factual sentences).

The prompt is rendered as crates/core/src/prompt.rs renders it (rules, then
the numbered passages; the structured instruction and the schema of
core::structured in structured mode); VARIANTS holds the wordings tried.
Keep a wording only if it lowers the invalid-id and unmarked rates.

  GROUNDCITE_BIN=target/debug/groundcite BASE_URL=http://127.0.0.1:8765 \\
      python3 bench/llm_wording.py

Environment: SAMPLE (questions, default 8), K (passages, default 5),
MAX_TOKENS (default 192), INDEX (an index of the handbook; made in a
temporary folder when unset).
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
BIN = os.environ["GROUNDCITE_BIN"]
BASE_URL = os.environ.get("BASE_URL", "http://127.0.0.1:8765").rstrip("/")
SAMPLE = int(os.environ.get("SAMPLE", "8"))
K = int(os.environ.get("K", "5"))
MAX_TOKENS = int(os.environ.get("MAX_TOKENS", "192"))
ENV = dict(os.environ, GROUNDCITE_MODEL_DIR="off")

REFUSAL = "Not covered by the provided documents."


def rules(n, example):
    rng = "The only passage is [1]." if n == 1 else f"The passages are numbered [1] to [{n}]."
    text = (
        "You answer ONLY from the numbered passages below.\n\n"
        "Rules:\n"
        "1. After every factual sentence you take from a passage, append its number in\n"
        "   brackets, like this: Employees are reimbursed within 30 days [2].\n"
        "   A sentence that uses several passages cites each of them, like [1][3].\n"
        f"2. Never cite a number you were not given. {rng}\n"
        "3. If the passages do not contain the answer, reply exactly:\n"
        f'   "{REFUSAL}"\n'
        "4. Do not merge two passages into one sentence unless both numbers appear.\n"
        "5. Do not use knowledge outside the passages, even if you are confident it is correct.\n"
    )
    if example:
        text += EXAMPLE
    return text


# The candidate: a worked example (passages, question, answer).
EXAMPLE = (
    "\nExample.\n"
    "Passages: [1] Expense claims must be filed within 60 days. "
    "[2] Reimbursements settle within 30 days of approval.\n"
    "Question: How long does reimbursement take?\n"
    "Answer: Reimbursements settle within 30 days of approval [2].\n"
)


def structured_instruction(n):
    example = 2 if n >= 2 else 1
    return (
        "Reply with one JSON object only, shaped like\n"
        f'{{"sentences": [{{"text": "Employees are reimbursed within 30 days.", "citations": [{example}]}}], "refusal": null}}\n'
        'One entry per sentence: its text without brackets, and in "citations" the numbers of the passages it comes from.\n'
        "If the passages do not contain the answer, reply\n"
        '{"sentences": [], "refusal": {"needed": "<what would be needed to answer>"}}\n'
    )


def schema(n):
    return {
        "type": "object",
        "properties": {
            "sentences": {"type": "array", "items": {
                "type": "object",
                "properties": {"text": {"type": "string"}, "citations": {
                    "type": "array", "items": {"type": "integer", "enum": list(range(1, n + 1))},
                    "minItems": 1, "maxItems": n}},
                "required": ["text", "citations"], "additionalProperties": False}},
            "refusal": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {"needed": {"type": "string"}},
                                                     "required": ["needed"], "additionalProperties": False}]},
        },
        "required": ["sentences", "refusal"], "additionalProperties": False,
    }


def render_json(raw):
    """core::structured::render, for whole replies (enough to score)."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    out = []
    for s in value.get("sentences") or []:
        text = " ".join(str(s.get("text", "")).split())
        if not text:
            continue
        ids = []
        for i in s.get("citations") or []:
            if i not in ids:
                ids.append(i)
        end = text[-1] if text[-1] in ".!?" else "."
        body = text[:-1] if text[-1] in ".!?" else text
        out.append(body.rstrip() + (" " + "".join(f"[{i}]" for i in ids) if ids else "") + end)
    if not out and value.get("refusal"):
        return REFUSAL
    return " ".join(out)


def chat(messages, response_format):
    body = {"model": "smollm2", "messages": messages, "temperature": 0, "max_tokens": MAX_TOKENS}
    if response_format:
        body["response_format"] = response_format
    req = urllib.request.Request(f"{BASE_URL}/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())["choices"][0]["message"]["content"] or ""


def main():
    questions = [json.loads(l) for l in (SHARED / "cases/questions-dev.jsonl").read_text().splitlines() if l.strip()]
    questions = [q for q in questions if q.get("answerable")][:SAMPLE]
    index = os.environ.get("INDEX")
    if not index:
        index = str(Path(tempfile.mkdtemp(prefix="groundcite-wording.")) / "index")
        subprocess.run([BIN, "ingest", "--index", index, "--handbook", str(SHARED / "corpora/tts-handbook/pages")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    cases = []
    for q in questions:
        hits = json.loads(subprocess.run([BIN, "search", "--index", index, "--json", "-k", str(K), q["question"]],
                                         check=True, capture_output=True, text=True, env=ENV).stdout)["hits"]
        passages = [{"id": h["chunk"]["id"], "text": h["chunk"]["text"]} for h in hits]
        cases.append((q, passages))
    rows = []
    for mode in ("free_text", "structured"):
        for example in (False, True):
            name = f"{mode}{' + example' if example else ''}"
            batch, started = [], time.monotonic()
            for q, passages in cases:
                n = len(passages)
                context = "\n\n".join(f"[{i + 1}] {p['text']}" for i, p in enumerate(passages))
                system = rules(n, example) + "\nPassages:\n\n" + context
                fmt = None
                if mode == "structured":
                    system += "\n" + structured_instruction(n)
                    fmt = {"type": "json_object", "schema": schema(n)}
                raw = chat([{"role": "system", "content": system}, {"role": "user", "content": q["question"]}], fmt)
                answer = render_json(raw) if mode == "structured" else raw
                if answer is None:
                    answer = raw
                batch.append({"id": q["id"], "question": q["question"], "passages": passages, "answer": answer})
            elapsed = time.monotonic() - started
            with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
                for case in batch:
                    f.write(json.dumps(case) + "\n")
            out = subprocess.run([BIN, "check", "--cases", f.name, "--json"], capture_output=True, text=True, env=ENV)
            reports = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
            refused = sum(1 for r in reports if r.get("status") == "no_evidence")
            invalid = sum(1 for r in reports if r.get("bad_ids"))
            unmarked = sum(len(r.get("unmarked", [])) for r in reports)
            factual = sum(r.get("counts", {}).get("factual", 0) for r in reports)
            cited_answers = sum(1 for r in reports if r.get("cited"))
            facts = sum(1 for (q, _), case in zip(cases, batch) if q.get("fact") and q["fact"].lower() in case["answer"].lower())
            row = {"variant": name, "answers": len(reports), "refused": refused, "with_invalid_ids": invalid,
                   "unmarked_factual": f"{unmarked}/{factual}", "answers_citing": cited_answers,
                   "fact_stated": facts, "seconds": round(elapsed, 1)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


if __name__ == "__main__":
    main()
