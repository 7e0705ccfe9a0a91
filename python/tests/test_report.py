"""The typed report: every field of the JSON, as objects."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import groundcite

HR = [
    {"id": "hr-1", "text": "Expense claims must be filed within 60 days of the expense.",
     "source_url": "https://hr.example/policy", "section": "Filing"},
    {"id": "hr-2", "text": "Reimbursements settle within 30 days of approval. Per diem claims follow the same schedule.",
     "source_url": "https://hr.example/policy", "section": "Reimbursement"},
]
ANSWER = "Reimbursements settle within 30 days of approval [2]. Expense claims must be filed within 90 days [1]. The office is in Paris."


def test_every_field_of_the_json_is_an_attribute() -> None:
    report = groundcite.check(HR, ANSWER)
    whole = report.to_dict()
    assert set(whole) == {
        "status", "supported", "grounded", "cited", "bad_ids", "unmarked", "coverage", "sentences",
        "sources", "verifier", "refusal", "counts", "malformed_markers",
    }
    for key, value in whole.items():
        attr = getattr(report, key)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            assert [a.to_dict() for a in attr] == value, key
        elif isinstance(value, dict):
            assert attr.to_dict() == value, key
        else:
            assert attr == value, key
    for sentence, want in zip(report.sentences, whole["sentences"]):
        for key, value in want.items():
            attr = getattr(sentence, key)
            if key == "markers":
                assert [m.to_dict() for m in attr] == value
            elif key == "evidence":
                assert (attr.to_dict() if attr else None) == value
            else:
                assert attr == value, key
    for source, want in zip(report.sources, whole["sources"]):
        for key, value in want.items():
            attr = getattr(source, key)
            if key == "markers":
                assert [{"start": s, "end": e} for s, e in attr] == value
            else:
                assert attr == value, key
    assert json.loads(report.to_json()) == whole


def test_the_verdicts_in_plain_words() -> None:
    report = groundcite.check(HR, ANSWER)
    verdicts = [(s.verdict, s.factual) for s in report.sentences]
    assert verdicts == [("supported", True), ("contradicted", True), ("uncited", True)]
    assert "60 days" in report.sentences[1].message
    assert report.sentences[0].evidence is not None
    assert report.sentences[0].evidence.quote == "Reimbursements settle within 30 days of approval."
    assert [s.text for s in report.unmarked] == ["The office is in Paris."]
    assert report.counts.contradicted == 1 and report.counts.uncited == 1
    assert report.verifier == "lexical"
    assert not report.grounded
    assert "Report(status=\"ok\"" in repr(report)


def test_config_changes_the_check() -> None:
    lenient = groundcite.Config(overrides={"check.grounded_threshold": 0.0})
    assert lenient.verifier == "lexical"
    answer = "Reimbursements settle within 30 days of approval [2]. The office is in Paris."
    assert not groundcite.check(HR, answer).grounded
    assert groundcite.check(HR, answer, config=lenient).grounded
    assert groundcite.check(HR, answer, config={"check": {"grounded_threshold": 0.0}}).grounded


def test_sentinel_refusal_form() -> None:
    config = {"check.refusal_form": "sentinel"}
    prompt = groundcite.render_prompt("Is home office furniture covered?", HR, config=config)
    assert "NOT_IN_SOURCES:" in prompt.system
    report = groundcite.check(HR, "NOT_IN_SOURCES: the furniture policy", config=config)
    assert report.refusal is not None
    assert (report.refusal.form, report.refusal.needed) == ("sentinel", "the furniture policy")


def test_prompt_messages_and_contract_role() -> None:
    prompt = groundcite.render_prompt("How long?", HR)
    assert [m["role"] for m in prompt.messages()] == ["system", "user"]
    assert "[2] Reimbursements settle" in prompt.system
    assert prompt.to_dict()["passages"][1]["id"] == "hr-2"
    one = groundcite.render_prompt("How long?", HR, config={"contract_role": "user"}).messages()
    assert [m["role"] for m in one] == ["user"]
    assert one[0]["content"].endswith("How long?")


def test_checks_from_many_threads_agree() -> None:
    want = groundcite.check(HR, ANSWER).to_dict()
    got: list[dict[str, object]] = []

    def run() -> None:
        for _ in range(50):
            got.append(groundcite.check(HR, ANSWER).to_dict())

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 200 and all(g == want for g in got)


def test_semantic_checking_with_the_model(model_dir: Path) -> None:
    config = groundcite.Config(overrides={"model_dir": model_dir, "check.verifier": "semantic"})
    assert config.verifier == "semantic"
    report = groundcite.check(HR, "Reimbursements are settled within 30 days once approved [2].", config=config)
    assert report.verifier == "semantic"
    assert report.sentences[0].verdict == "supported"
