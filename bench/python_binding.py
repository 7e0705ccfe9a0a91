"""The Python side of bench/python-check.sh: ``groundcite.check`` from Python
on every case of a JSONL file (passages as the dicts the file holds), timed
as ``check_timing`` times ``Checker::check`` in Rust: the median over passes
of the mean time per case. Also the same with ``to_dict()`` (the whole
report as Python objects), which a caller pays only when it asks.

Usage: python bench/python_binding.py CASES.jsonl [PASSES]
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import groundcite


def main() -> None:
    path = sys.argv[1]
    passes = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    cases = [json.loads(line) for line in open(path) if line.strip()]
    check = groundcite.check
    for label, whole in (("check()", False), ("check().to_dict()", True)):
        samples = []
        for _ in range(passes):
            started = time.perf_counter_ns()
            for c in cases:
                report = check(c["passages"], c["answer"], c.get("question"))
                if whole:
                    report.to_dict()
            samples.append((time.perf_counter_ns() - started) / len(cases))
        print(
            f"python groundcite.{label}: {statistics.median(samples):.0f} ns per case "
            f"(median of {passes} passes over {len(cases)} cases)"
        )


if __name__ == "__main__":
    main()
