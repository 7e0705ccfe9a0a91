"""Bad input and failing adapters are exceptions with the service's codes;
findings never are."""

from __future__ import annotations

from pathlib import Path

import pytest

import groundcite

PASSAGES = ["Reimbursements settle within 30 days of approval."]


def test_every_error_is_a_groundcite_error_with_a_code() -> None:
    for cls in [
        groundcite.InvalidInputError,
        groundcite.BadRequestError,
        groundcite.LimitExceededError,
        groundcite.ConfigError,
        groundcite.IndexUnavailableError,
        groundcite.GeneratorError,
        groundcite.InternalError,
    ]:
        assert issubclass(cls, groundcite.GroundciteError)


@pytest.mark.parametrize("answer", ["", "   \n"])
def test_an_empty_answer(answer: str) -> None:
    with pytest.raises(groundcite.BadRequestError) as e:
        groundcite.check(PASSAGES, answer)
    assert e.value.code == "empty_answer"


def test_an_answer_that_is_not_text() -> None:
    with pytest.raises(groundcite.InvalidInputError, match="answer: expected a str"):
        groundcite.check(PASSAGES, b"bytes")  # type: ignore[arg-type]


def test_over_a_limit() -> None:
    config = groundcite.Config(overrides={"check": {"limits": {"max_answer_bytes": 10}}})
    with pytest.raises(groundcite.LimitExceededError) as e:
        groundcite.check(PASSAGES, "Reimbursements settle within 30 days [1].", config=config)
    assert e.value.code == "limit_exceeded"
    assert "answer bytes" in str(e.value)


def test_an_unknown_key_names_the_key_meant() -> None:
    with pytest.raises(groundcite.ConfigError) as e:
        groundcite.Config(overrides={"check.bad_id_polcy": "strip"})
    assert e.value.code == "configuration"
    assert "bad_id_policy" in str(e.value)


def test_a_value_of_the_wrong_type() -> None:
    with pytest.raises(groundcite.ConfigError, match="top_k"):
        groundcite.Config(overrides={"top_k": "many"})
    with pytest.raises(groundcite.InvalidInputError, match="set lists in a groundcite.toml"):
        groundcite.Config(overrides={"top_k": [1, 2]})


def test_a_missing_model_folder_is_an_error_not_a_fallback(tmp_path: Path) -> None:
    missing = tmp_path / "no-model"
    with pytest.raises(groundcite.ConfigError) as e:
        groundcite.Config(overrides={"model_dir": missing, "check.verifier": "semantic"})
    assert str(missing) in str(e.value)


def test_semantic_without_a_model_is_an_error() -> None:
    with pytest.raises(groundcite.ConfigError, match="needs model_dir"):
        groundcite.Config(overrides={"check.verifier": "semantic"})


def test_a_config_file(tmp_path: Path) -> None:
    path = tmp_path / "groundcite.toml"
    path.write_text('[check]\nbad_id_policy = "strip"\ngrounded_threshold = 0.5\n')
    config = groundcite.Config(path)
    assert config.to_dict()["check"]["bad_id_policy"] == "strip"
    assert config.to_dict()["check"]["grounded_threshold"] == 0.5
    path.write_text("[check]\ngrounded_treshold = 0.5\n")
    with pytest.raises(groundcite.ConfigError, match="grounded_threshold"):
        groundcite.Config(path)
    with pytest.raises(groundcite.ConfigError, match="nope.toml"):
        groundcite.Config(tmp_path / "nope.toml")


def test_the_environment_is_not_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GROUNDCITE_CHECK__BAD_ID_POLICY", "strip")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "groundcite.toml").write_text("top_k = 9\n")
    settings = groundcite.Config().to_dict()
    assert settings["check"]["bad_id_policy"] == "refuse"
    assert settings["top_k"] == 5


def test_no_index_there(tmp_path: Path) -> None:
    index = groundcite.Index(tmp_path / "none")
    assert len(index) == 0
    with pytest.raises(groundcite.IndexUnavailableError) as e:
        index.search("reimbursement")
    assert e.value.code == "index_unavailable"
    assert "groundcite ingest" in str(e.value)


def test_ingest_of_a_missing_path(tmp_path: Path) -> None:
    index = groundcite.Index(tmp_path / "index")
    with pytest.raises(FileNotFoundError, match="no-such-dir"):
        index.ingest([tmp_path / "no-such-dir"])


def test_bad_parameters(demo_index: groundcite.Index) -> None:
    with pytest.raises(groundcite.BadRequestError) as e:
        demo_index.search("   ")
    assert e.value.code == "empty_query"
    with pytest.raises(groundcite.BadRequestError) as e:
        demo_index.search("leave", k=0)
    assert e.value.code == "invalid_parameter"
    with pytest.raises(groundcite.BadRequestError) as e:
        demo_index.ask("")
    assert e.value.code == "empty_question"
    with pytest.raises(groundcite.ConfigError, match="generator"):
        demo_index.ask("How long does reimbursement take?", generator="gpt")


def test_an_unreachable_model_server(demo_index: groundcite.Index) -> None:
    generator = groundcite.openai_compatible(
        "http://127.0.0.1:9/v1", "none", api_key_env="GROUNDCITE_TEST_NO_KEY", api_key_required=False
    )
    generator["openai.max_retries"] = 0
    with pytest.raises(groundcite.GeneratorError) as e:
        demo_index.ask("How long does reimbursement take?", generator=generator)
    assert e.value.code == "llm_connect"
