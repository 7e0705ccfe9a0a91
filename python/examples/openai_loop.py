"""A plain OpenAI-SDK loop checked by groundcite.

Search the index, send groundcite's citation contract to any
OpenAI-compatible Chat Completions server, check the reply, regenerate once
if it cites a passage never sent (then refuse), and print the verdicts and
the sources.

Against a real local server (llama.cpp's ``llama-server``, vLLM, Ollama)::

    pip install groundcite -r python/examples/requirements.txt
    python python/examples/openai_loop.py --base-url http://127.0.0.1:11434/v1 \\
        --model llama3.1:8b "How long does reimbursement take?"

``OPENAI_BASE_URL``, ``OPENAI_MODEL`` and ``OPENAI_API_KEY`` are read when
set. The first run ingests the demo handbook into ``--index``. Exit status:
0 when the final answer is grounded or an honest refusal, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import groundcite
import openai


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="An OpenAI-SDK loop checked by groundcite.")
    parser.add_argument("question", nargs="?", default="How long does reimbursement take?")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"))
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "fake"))
    parser.add_argument("--index", default="./.groundcite/py-example-index")
    return parser.parse_args()


def open_index(path: str) -> groundcite.Index:
    """The index at ``path``, with the demo handbook ingested if it is new."""
    index = groundcite.Index(path)
    if len(index) == 0:
        index.ingest_demo()
    return index


def print_report(answer: str, report: groundcite.Report) -> None:
    print(f"answer: {answer}")
    for sentence in report.sentences:
        print(f"  [{sentence.verdict}] {sentence.text}  {sentence.message}".rstrip())
    for source in report.sources:
        print(f'  source: {source.label} <{source.url}> "{source.quote}"')
    print(f"status={report.status} grounded={report.grounded} coverage={report.coverage:.2f}")


def main() -> int:
    args = parse_args()
    index = open_index(args.index)
    client = openai.OpenAI(base_url=args.base_url, api_key=os.environ.get("OPENAI_API_KEY", "unused"))

    hits = index.search(args.question, k=5)
    if not groundcite.should_answer([hit.score for hit in hits]):
        # The retrieval gate: nothing relevant enough, so no model call.
        answer = groundcite.REFUSAL
        report = groundcite.check(hits, answer, question=args.question)
    else:
        prompt = groundcite.render_prompt(args.question, hits)
        # The passages as sent ([k] is sent[k-1], with the text as sent): the
        # prompt may drop duplicates or trim passages to its token budget.
        sent = prompt.passages
        messages: list[Any] = prompt.messages()  # system + user, then any correction
        for attempt in range(2):
            reply = client.chat.completions.create(model=args.model, messages=messages, temperature=0)
            answer = (reply.choices[0].message.content or "").strip()  # empty: check raises
            report = groundcite.check(sent, answer, question=args.question)
            if not report.bad_ids:
                break
            print(f"attempt {attempt + 1} cited passages never sent: {report.bad_ids}", file=sys.stderr)
            messages += [
                {"role": "assistant", "content": answer},
                {"role": "user", "content": groundcite.corrective_message(report.bad_ids, len(sent))},
            ]
        else:
            # Still citing ids never sent: unverifiable, so refuse.
            answer = groundcite.REFUSAL
            report = groundcite.check(sent, answer, question=args.question)

    print(f"question: {args.question}")
    print_report(answer, report)
    refused = report.refusal is not None
    print("result:", "refusal" if refused else "grounded" if report.grounded else "not grounded")
    return 0 if report.grounded or refused else 1


if __name__ == "__main__":
    sys.exit(main())
