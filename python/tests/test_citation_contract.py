"""The citation contract's worked examples, written against the package,
give the same results as the contract's reference Python functions (copied
below from the design documents, as written there)."""

from __future__ import annotations

import re
from typing import Any

import groundcite

# --- The reference functions, verbatim in logic -----------------------------

SENTENCE = re.compile(r"(?<=[.!?]) +")
MARKER = re.compile(r"\[(\d+)\]")
REFUSAL = "Not covered by the provided documents."


def reference_check(answer: str, passages: list[str]) -> dict[str, Any]:
    valid = set(range(1, len(passages) + 1))
    cited = {int(m) for m in MARKER.findall(answer)}
    sentences = [s for s in SENTENCE.split(answer) if s.strip()]
    unmarked = [s for s in sentences if re.search(r"\d", s) and not MARKER.search(s)]
    return {"cited": sorted(cited), "bad_ids": sorted(cited - valid), "unmarked": unmarked}


def reference_resolve(answer: str, passages: list[dict[str, str]]) -> dict[str, Any]:
    markers = [int(m) for m in re.findall(r"\[(\d+)\]", answer)]
    if answer.strip() == REFUSAL:
        return {"status": "no_evidence", "sources": []}
    sources: list[dict[str, str]] = []
    seen: set[str] = set()
    for i in sorted(set(markers)):
        if not 1 <= i <= len(passages):
            continue  # the reference indexes passages[i - 1] unguarded; an id never sent has no row
        p = passages[i - 1]
        if p["source_url"] not in seen:
            seen.add(p["source_url"])
            sources.append({"label": p["section"], "url": p["source_url"], "quote": p["text"][:160]})
    bad = [i for i in markers if not 1 <= i <= len(passages)]
    return {"status": "ok" if not bad else "unverified", "sources": sources}


def reference_should_answer(scores: list[float], min_best: float = 0.55) -> bool:
    return bool(scores) and max(scores) >= min_best


def reference_check_citations(answer: str, context_ids: set[int]) -> dict[str, Any]:
    cited = {int(x) for x in re.findall(r"\[(\d+)\]", answer)}
    return {"cited": sorted(cited), "unknown_ids": sorted(cited - context_ids), "has_citation": bool(cited)}


# --- The worked examples -------------------------------------------------------

HR = [
    {
        "id": "hr-1",
        "text": "Expense claims must be filed within 60 days of the expense.",
        "source_url": "https://hr.example/policy",
        "section": "Filing",
    },
    {
        "id": "hr-2",
        "text": "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.",
        "source_url": "https://hr.example/policy",
        "section": "Reimbursement",
    },
    {
        "id": "hr-3",
        "text": "Questions about reimbursement go to the finance help desk.",
        "source_url": "https://hr.example/faq",
        "section": "Help",
    },
]
TEXTS = [p["text"] for p in HR]

CONTRACT_ANSWER = (
    "Reimbursements settle within 30 days of approval [2]. Claims for per diem are paid on the same schedule [2]."
)
BAD_ANSWER = "Refunds take 14 days [7]. Reimbursements settle in 14 days."


def test_check_worked_example_one() -> None:
    ref = reference_check(CONTRACT_ANSWER, TEXTS)
    assert ref == {"cited": [2], "bad_ids": [], "unmarked": []}
    report = groundcite.check(TEXTS, CONTRACT_ANSWER)
    assert report.cited == ref["cited"]
    assert report.bad_ids == ref["bad_ids"]
    assert [s.text for s in report.unmarked] == ref["unmarked"]
    assert report.status == "ok"


def test_check_worked_example_two() -> None:
    ref = reference_check(BAD_ANSWER, TEXTS)
    assert ref == {"cited": [7], "bad_ids": [7], "unmarked": ["Reimbursements settle in 14 days."]}
    report = groundcite.check(TEXTS, BAD_ANSWER)
    assert report.cited == ref["cited"]
    assert report.bad_ids == ref["bad_ids"]
    assert [s.text for s in report.unmarked] == ref["unmarked"]
    # The hard failure the reference's status would call unverified.
    assert report.status == "unverified"
    assert not report.grounded


def test_resolve_worked_examples() -> None:
    for answer in [CONTRACT_ANSWER, "Reimbursements settle within 30 days of approval [2].", REFUSAL, BAD_ANSWER]:
        ref = reference_resolve(answer, HR)
        ours = groundcite.resolve(answer, HR)
        assert ours.status == ref["status"], answer
        assert [(s.label, s.url) for s in ours.sources] == [(s["label"], s["url"]) for s in ref["sources"]], answer
    ours = groundcite.resolve("Reimbursements settle within 30 days of approval [2].", HR)
    # The reference quotes the passage's first 160 characters; groundcite quotes
    # the evidence, which here is the passage's first sentence.
    assert ours.to_dict() == {
        "status": "ok",
        "sources": [
            {
                "label": "Reimbursement",
                "url": "https://hr.example/policy",
                "quote": "Reimbursements settle within 30 days of approval.",
                "quote_passage": 2,
                "quote_start": 0,
                "quote_end": 49,
                "passages": [2],
                "markers": [{"start": 49, "end": 52}],
            }
        ],
    }


def test_refusal_sentence_is_the_contract_s() -> None:
    assert groundcite.REFUSAL == REFUSAL
    report = groundcite.check(TEXTS, REFUSAL)
    assert report.status == "no_evidence"
    assert report.refusal is not None and report.refusal.form == "sentence"
    assert report.grounded  # an honest refusal is grounded


def test_check_citations_worked_example() -> None:
    context = [
        "COD refunds go to your bank account or wallet.",
        "Refunds arrive within 5-7 working days.",
    ]
    answers = [
        "COD refunds go to your bank account or wallet [2], within 5-7 working days [1].",
        "Refunds are instant for all orders [4].",
        "You will get your refund soon.",
    ]
    expected = [
        {"cited": [1, 2], "unknown_ids": [], "has_citation": True},
        {"cited": [4], "unknown_ids": [4], "has_citation": True},
        {"cited": [], "unknown_ids": [], "has_citation": False},
    ]
    for answer, want in zip(answers, expected):
        assert reference_check_citations(answer, {1, 2}) == want
        report = groundcite.check(context, answer)
        assert {
            "cited": report.cited,
            "unknown_ids": report.bad_ids,
            "has_citation": bool(report.cited),
        } == want


def test_should_answer_worked_example() -> None:
    for scores in ([0.83, 0.79], [0.31, 0.22], []):
        assert groundcite.should_answer(scores, min_best=0.55) == reference_should_answer(scores)
    assert groundcite.should_answer([0.83, 0.79]) is True
    assert groundcite.should_answer([0.31, 0.22]) is False
    assert groundcite.should_answer([]) is False


def test_contradiction_the_reference_cannot_see() -> None:
    # The contract's opening story: a valid id is not proof.
    report = groundcite.check(HR, "Reimbursements settle in 14 days [2].")
    assert report.status == "ok" and report.bad_ids == []
    (sentence,) = report.sentences
    assert sentence.verdict == "contradicted"
    assert "30 days" in sentence.message
    assert not report.grounded


def test_the_corrective_message_names_the_ids_and_the_range() -> None:
    message = groundcite.corrective_message([7], 3)
    assert "[7]" in message and "[1]" in message and "[3]" in message
