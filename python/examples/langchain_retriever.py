"""A LangChain retriever and chat model, checked by groundcite.

The retriever wraps ``groundcite.Index.search`` and returns LangChain
``Document``s; ``ChatOpenAI`` (pointed at any OpenAI-compatible server)
answers under groundcite's citation contract, and
``groundcite.check(docs, answer)`` checks the reply against the documents
sent. Regenerates once on ids never sent, then refuses.

Against a real local server (llama.cpp's ``llama-server``, vLLM, Ollama)::

    pip install groundcite -r python/examples/requirements.txt
    python python/examples/langchain_retriever.py --base-url http://127.0.0.1:8080/v1 \\
        --model local "How long does reimbursement take?"

``OPENAI_BASE_URL``, ``OPENAI_MODEL`` and ``OPENAI_API_KEY`` are read when
set. Exit status: 0 when the final answer is grounded or an honest refusal,
1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import groundcite
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_openai import ChatOpenAI
from pydantic import ConfigDict


class GroundciteRetriever(BaseRetriever):
    """``groundcite.Index.search`` as a LangChain retriever."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    index: groundcite.Index
    k: int = 5

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [
            Document(
                page_content=hit.text,
                metadata={"source_url": hit.source_url, "section": hit.section, "id": hit.id, "score": hit.score},
            )
            for hit in self.index.search(query, k=self.k)
        ]


def open_index(path: str) -> groundcite.Index:
    """The index at ``path``, with the demo handbook ingested if it is new."""
    index = groundcite.Index(path)
    if len(index) == 0:
        index.ingest_demo()
    return index


def answer(question: str, docs: list[Document], llm: ChatOpenAI) -> tuple[str, list[Document]]:
    """The answer and the documents it was given, numbered as sent."""
    if not groundcite.should_answer([d.metadata["score"] for d in docs]):
        return groundcite.REFUSAL, docs  # the retrieval gate: no model call
    prompt = groundcite.render_prompt(question, docs)
    by_id = {d.metadata["id"]: d for d in docs}
    sent = [by_id[p.id] for p in prompt.passages]
    messages: list[Any] = prompt.messages()
    for _ in range(2):
        text = llm.invoke(messages).text.strip()  # empty: check raises
        bad_ids = groundcite.check(sent, text, question=question).bad_ids
        if not bad_ids:
            return text, sent
        print(f"cited passages never sent: {bad_ids}", file=sys.stderr)
        messages += [
            {"role": "assistant", "content": text},
            {"role": "user", "content": groundcite.corrective_message(bad_ids, len(sent))},
        ]
    return groundcite.REFUSAL, sent


def main() -> int:
    parser = argparse.ArgumentParser(description="A LangChain retriever checked by groundcite.")
    parser.add_argument("question", nargs="?", default="How long does reimbursement take?")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"))
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "fake"))
    parser.add_argument("--index", default="./.groundcite/py-example-index")
    args = parser.parse_args()

    retriever = GroundciteRetriever(index=open_index(args.index))
    llm = ChatOpenAI(
        base_url=args.base_url,
        model=args.model,
        api_key=os.environ.get("OPENAI_API_KEY", "unused"),  # type: ignore[arg-type]
        temperature=0,
    )
    text, docs = answer(args.question, retriever.invoke(args.question), llm)
    report = groundcite.check(docs, text, question=args.question)

    print(f"question: {args.question}")
    print(f"answer: {text}")
    for sentence in report.sentences:
        print(f"  [{sentence.verdict}] {sentence.text}  {sentence.message}".rstrip())
    for source in report.sources:
        print(f'  source: {source.label} <{source.url}> "{source.quote}"')
    print(f"status={report.status} grounded={report.grounded} coverage={report.coverage:.2f}")
    refused = report.refusal is not None
    print("result:", "refusal" if refused else "grounded" if report.grounded else "not grounded")
    return 0 if report.grounded or refused else 1


if __name__ == "__main__":
    sys.exit(main())
