"""The package's reports are the CLI's: ``check(...).to_dict()`` equals
``groundcite check --cases FILE`` line for line, on the shared cases and the
repository's fixtures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import groundcite
from conftest import REPO, SHARED, need, read_jsonl

FIXTURES = REPO / "crates" / "testdata" / "fixtures" / "cases"


def case_files() -> list[Path]:
    """The repository's fixtures, and the shared cases when present
    (required under CI=true)."""
    files = sorted(FIXTURES.glob("*.jsonl"))
    shared = [SHARED / "cases" / "dev.jsonl", SHARED / "cases" / "paraphrase-dev.jsonl"]
    if all(f.is_file() for f in shared):
        files += shared
    else:
        need(False, f"{SHARED}/cases")
    return files


def cli_reports(binary: Path, path: Path, extra: list[str]) -> list[dict[str, Any]]:
    out = subprocess.run(
        [str(binary), "check", "--cases", str(path), *extra],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        cwd="/",
    )
    assert out.returncode in (0, 1), out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def test_reports_equal_the_cli_s(groundcite_bin: Path) -> None:
    compared = 0
    for path in case_files():
        cases = read_jsonl(path)
        reports = cli_reports(groundcite_bin, path, [])
        by_id = {r["id"]: r for r in reports if "id" in r}
        for case in cases:
            if "answer" not in case or "passages" not in case:
                continue
            want = by_id[case["id"]]
            want.pop("id")
            got = groundcite.check(case["passages"], case["answer"], question=case.get("question")).to_dict()
            assert got == want, (path.name, case["id"])
            compared += 1
    assert compared >= 100, compared
