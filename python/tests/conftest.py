"""Shared fixtures. Tests that need ``../shared`` (the design's cases), the
``groundcite`` binary or the embedding model skip without them, except
under ``CI=true``, where a missing one is a failure (as in the Rust suite)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

import groundcite

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SHARED = REPO.parent / "shared"
CI = os.environ.get("CI") == "true"

sys.path.insert(0, str(HERE))
from fake_openai import FakeOpenAI  # noqa: E402


def need(condition: bool, what: str) -> None:
    """Skip when `what` is missing, fail under CI=true."""
    if condition:
        return
    if CI:
        pytest.fail(f"{what} is required when CI=true")
    pytest.skip(f"{what} is missing")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def shared() -> Path:
    need((SHARED / "cases").is_dir(), f"{SHARED} (the shared cases)")
    return SHARED


@pytest.fixture(scope="session")
def groundcite_bin() -> Path:
    """The CLI built from this checkout (``GROUNDCITE_BIN``, else
    ``target/debug/groundcite`` or the release one)."""
    candidates = [os.environ.get("GROUNDCITE_BIN", "")]
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    if not target.is_absolute():
        target = REPO / target
    candidates += [str(target / "debug" / "groundcite"), str(target / "release" / "groundcite")]
    for c in candidates:
        if c and Path(c).is_file():
            return Path(c)
    need(False, "the groundcite binary (GROUNDCITE_BIN or target/debug/groundcite)")
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def model_dir() -> Path:
    value = os.environ.get("GROUNDCITE_MODEL_DIR", "")
    need(bool(value) and Path(value).is_dir(), "the embedding model (GROUNDCITE_MODEL_DIR; scripts/fetch-model.sh)")
    return Path(value)


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory: pytest.TempPathFactory) -> groundcite.Index:
    """The embedded demo handbook, ingested once for the session."""
    index = groundcite.Index(tmp_path_factory.mktemp("demo") / "index")
    index.ingest_demo()
    return index


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server
