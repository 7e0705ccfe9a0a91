"""A LlamaIndex query engine whose response is checked by groundcite.

The retriever wraps ``groundcite.Index.search``; the query engine sends
groundcite's citation contract (``render_prompt(...).messages()``) to an
OpenAI-compatible server through a LlamaIndex LLM, so ``[k]`` in the
response is ``response.source_nodes[k-1]``, and
``groundcite.check(response.source_nodes, str(response))`` checks it.
(LlamaIndex's own response synthesizers repack the chunks into one
unnumbered context, which is why the engine renders the prompt itself.)
Nothing reaches the internet: no embedding model, no tokenizer download.

Against a real local server (llama.cpp's ``llama-server``, vLLM, Ollama)::

    pip install groundcite -r python/examples/requirements.txt
    python python/examples/llamaindex_query.py --base-url http://127.0.0.1:8000/v1 \\
        --model Qwen/Qwen2.5-7B-Instruct "How long does reimbursement take?"

``OPENAI_BASE_URL``, ``OPENAI_MODEL`` and ``OPENAI_API_KEY`` are read when
set. Exit status: 0 when the final answer is grounded or an honest refusal,
1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import groundcite
import openai
from llama_index.core import MockEmbedding, Settings
from llama_index.core.base.response.schema import Response
from llama_index.core.llms import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from pydantic import PrivateAttr


class GroundciteRetriever(BaseRetriever):
    """``groundcite.Index.search`` as a LlamaIndex retriever."""

    def __init__(self, index: groundcite.Index, k: int = 5) -> None:
        super().__init__()
        self._index = index
        self._k = k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [
            NodeWithScore(
                node=TextNode(
                    text=hit.text,
                    id_=hit.id,
                    metadata={"source_url": hit.source_url, "section": hit.section},
                ),
                score=hit.score,
            )
            for hit in self._index.search(query_bundle.query_str, k=self._k)
        ]


class OpenAICompatible(CustomLLM):
    """A chat model behind any OpenAI-compatible server, via the ``openai`` SDK."""

    model: str
    base_url: str
    _client: openai.OpenAI = PrivateAttr()

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        self._client = openai.OpenAI(base_url=self.base_url, api_key=os.environ.get("OPENAI_API_KEY", "unused"))

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name=self.model, is_chat_model=True)

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        reply = self._client.chat.completions.create(
            model=self.model,
            messages=[{"role": m.role.value, "content": m.content or ""} for m in messages],  # type: ignore[misc]
            temperature=0,
        )
        content = reply.choices[0].message.content or ""
        return ChatResponse(message=ChatMessage(role="assistant", content=content), raw=reply)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        response = self.chat([ChatMessage(role="user", content=prompt)])
        return CompletionResponse(text=response.message.content or "")

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield self.complete(prompt, formatted=formatted)


class GroundedQueryEngine(CustomQueryEngine):
    """Retrieve, gate, prompt with groundcite's contract, regenerate once on
    ids never sent, then refuse. ``source_nodes`` are the nodes sent, in
    their prompt order."""

    retriever: BaseRetriever
    llm: CustomLLM

    def custom_query(self, query_str: str) -> Response:
        nodes = self.retriever.retrieve(query_str)
        if not groundcite.should_answer([n.score or 0.0 for n in nodes]):
            return Response(response=groundcite.REFUSAL, source_nodes=nodes)
        prompt = groundcite.render_prompt(query_str, nodes)
        by_id = {n.node.node_id: n for n in nodes}
        sent = [by_id[p.id] for p in prompt.passages]
        messages = [ChatMessage(role=m["role"], content=m["content"]) for m in prompt.messages()]
        for _ in range(2):
            answer = (self.llm.chat(messages).message.content or "").strip()  # empty: check raises
            bad_ids = groundcite.check(sent, answer, question=query_str).bad_ids
            if not bad_ids:
                return Response(response=answer, source_nodes=sent)
            print(f"cited passages never sent: {bad_ids}", file=sys.stderr)
            messages += [
                ChatMessage(role="assistant", content=answer),
                ChatMessage(role="user", content=groundcite.corrective_message(bad_ids, len(sent))),
            ]
        return Response(response=groundcite.REFUSAL, source_nodes=sent)


def open_index(path: str) -> groundcite.Index:
    """The index at ``path``, with the demo handbook ingested if it is new."""
    index = groundcite.Index(path)
    if len(index) == 0:
        index.ingest_demo()
    return index


def main() -> int:
    parser = argparse.ArgumentParser(description="A LlamaIndex query engine checked by groundcite.")
    parser.add_argument("question", nargs="?", default="How long does reimbursement take?")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"))
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "fake"))
    parser.add_argument("--index", default="./.groundcite/py-example-index")
    args = parser.parse_args()

    llm = OpenAICompatible(model=args.model, base_url=args.base_url)
    # Keep LlamaIndex offline: no OpenAI defaults, no tiktoken download.
    Settings.llm = llm
    Settings.embed_model = MockEmbedding(embed_dim=8)
    Settings.tokenizer = str.split

    engine = GroundedQueryEngine(retriever=GroundciteRetriever(open_index(args.index)), llm=llm)
    response = engine.query(args.question)
    report = groundcite.check(response.source_nodes, str(response), question=args.question)

    print(f"question: {args.question}")
    print(f"answer: {response}")
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
