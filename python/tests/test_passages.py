"""Passages as callers hold them: str, dicts, dataclasses, objects with
``text`` / ``page_content`` and ``metadata`` (LlamaIndex and LangChain
shapes, imitated here: the real packages are tested by the examples)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

import groundcite

TEXT = "Reimbursements settle within 30 days of approval."
ANSWER = "Reimbursements settle within 30 days of approval [1]."
URL = "https://hr.example/policy"


@dataclass
class Chunk:
    text: str
    source_url: str = ""
    section: str = ""


@dataclass
class LangChainDocument:  # langchain_core.documents.Document's fields
    page_content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


class TextNode:  # llama_index.core.schema.TextNode's fields
    def __init__(self, text: str, id_: str, metadata: dict[str, Any]) -> None:
        self.text = text
        self.id_ = id_
        self.metadata = metadata

    @property
    def node_id(self) -> str:
        return self.id_


class NodeWithScore:  # llama_index.core.schema.NodeWithScore
    def __init__(self, node: TextNode, score: float | None) -> None:
        self.node = node
        self.score = score


class ContentOnly:  # text behind get_content(), as some LlamaIndex nodes
    def __init__(self, text: str) -> None:
        self._text = text
        self.metadata = {"url": URL, "title": "Reimbursement"}

    def get_content(self) -> str:
        return self._text


SHAPES: list[Any] = [
    TEXT,
    {"text": TEXT, "source_url": URL, "section": "Reimbursement"},
    {"page_content": TEXT, "metadata": {"source": URL, "title": "Reimbursement"}},
    {"text": TEXT, "url": URL, "label": "Reimbursement", "score": 0.9},
    Chunk(TEXT, URL, "Reimbursement"),
    LangChainDocument(TEXT, {"source": URL, "section": "Reimbursement"}, id="doc-1"),
    TextNode(TEXT, "node-1", {"source_url": URL, "section": "Reimbursement"}),
    NodeWithScore(TextNode(TEXT, "node-1", {"url": URL, "title": "Reimbursement"}), 0.42),
    ContentOnly(TEXT),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: type(s).__name__)
def test_every_shape_checks_alike(shape: Any) -> None:
    report = groundcite.check([shape], ANSWER)
    assert report.status == "ok"
    assert report.grounded
    assert [s.verdict for s in report.sentences] == ["supported"]
    (source,) = report.sources
    if not isinstance(shape, str):
        assert source.url == URL
        assert source.label == "Reimbursement"


def test_ids_come_from_the_object_or_the_position() -> None:
    prompt = groundcite.render_prompt(
        "How long?",
        [
            TEXT,
            LangChainDocument("Other.", {}, id="doc-7"),
            TextNode("Third.", "node-3", {}),
            NodeWithScore(TextNode("Fourth.", "node-4", {}), 0.1),
            {"text": "Fifth.", "metadata": {"id": 55}},
        ],
    )
    assert [p.id for p in prompt.passages] == ["1", "doc-7", "node-3", "node-4", "55"]
    assert [p.n for p in prompt.passages] == [1, 2, 3, 4, 5]


def test_any_iterable_of_passages() -> None:
    report = groundcite.check((t for t in [TEXT, "Other."]), ANSWER)
    assert report.cited == [1] and report.status == "ok"


def test_a_passage_without_text_is_named() -> None:
    with pytest.raises(groundcite.InvalidInputError) as e:
        groundcite.check([TEXT, {"body": TEXT}], ANSWER)
    assert "passages[1]" in str(e.value)
    assert e.value.code == "invalid_body"
    assert isinstance(e.value, TypeError)


def test_text_of_the_wrong_type_is_named() -> None:
    with pytest.raises(groundcite.InvalidInputError, match=r"passages\[0\]: \"text\" must be a str, not int"):
        groundcite.check([{"text": 5}], ANSWER)


def test_one_str_is_not_a_list_of_passages() -> None:
    with pytest.raises(groundcite.InvalidInputError, match="wrap it in a list"):
        groundcite.check(TEXT, ANSWER)


def test_not_iterable() -> None:
    with pytest.raises(groundcite.InvalidInputError, match="expected a list of passages"):
        groundcite.check(42, ANSWER)  # type: ignore[arg-type]


def test_a_bad_score_is_named() -> None:
    with pytest.raises(groundcite.InvalidInputError, match=r"passages\[0\]: \"score\" must be a number"):
        groundcite.check([{"text": TEXT, "score": "high"}], ANSWER)


def test_non_ascii_text_and_char_offsets() -> None:
    passages = ["Les remboursements sont réglés sous 30 jours après l’approbation."]
    answer = "Déjà validé. Les remboursements sont réglés sous 30 jours après l’approbation [1]."
    report = groundcite.check(passages, answer)
    for s in report.sentences:
        assert answer[s.char_start : s.char_end] == s.text
        assert answer.encode()[s.start : s.end].decode() == s.text
        for m in s.markers:
            assert answer[m.char_start : m.char_end] == m.text == "[1]"


def test_pairs_of_passage_and_score() -> None:
    # LangChain's similarity_search_with_score returns (Document, score).
    prompt = groundcite.render_prompt("How long?", [(LangChainDocument(TEXT, {"source": URL}), 0.8), (TEXT, 0.2)])
    assert [p.score for p in prompt.passages] == [pytest.approx(0.8), pytest.approx(0.2)]
    with pytest.raises(groundcite.InvalidInputError, match="needs a number as its score"):
        groundcite.check([(TEXT, "high")], ANSWER)


def test_numbers_for_ids_and_labels() -> None:
    prompt = groundcite.render_prompt("How long?", [{"text": TEXT, "id": 7, "metadata": {"section": 3, "score": 0.5}}])
    (p,) = prompt.passages
    assert (p.id, p.section, p.score) == ("7", "3", 0.5)


def test_check_against_the_passages_a_prompt_sent() -> None:
    # The prompt sends each id once and at most the assembly's number of
    # passages: its passages, not the list given, are what [k] means.
    given = [{"id": "a", "text": "Other things."}, {"id": "a", "text": "Other things."}, {"text": TEXT, "id": "b"}]
    prompt = groundcite.render_prompt("How long?", given)
    assert [(p.n, p.id) for p in prompt.passages] == [(1, "a"), (2, "b")]
    report = groundcite.check(prompt.passages, "Reimbursements settle within 30 days of approval [2].")
    assert report.grounded and report.bad_ids == []
    assert groundcite.check(prompt.passages, "Reimbursements settle within 30 days [3].").bad_ids == [3]
