"""The citation contract's reference Python check() (verbatim logic), timed on the dev
answers, for a side-by-side with `cargo bench -p groundcite-core --bench check`.

Usage: python3 bench/python_check.py [../shared/cases/dev.jsonl]
Prints the median time per answer over repeated passes.
"""
import json
import re
import statistics
import sys
import time

SENTENCE = re.compile(r"(?<=[.!?]) +")
MARKER = re.compile(r"\[(\d+)\]")


def check(answer, passages):
    valid = set(range(1, len(passages) + 1))
    cited = {int(m) for m in MARKER.findall(answer)}
    sentences = [s for s in SENTENCE.split(answer) if s.strip()]
    unmarked = [s for s in sentences if re.search(r"\d", s) and not MARKER.search(s)]
    return {"cited": sorted(cited), "bad_ids": sorted(cited - valid), "unmarked": unmarked}


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "../shared/cases/dev.jsonl"
    cases = [json.loads(l) for l in open(path) if l.strip()]
    pairs = [(c["answer"], c["passages"]) for c in cases]
    samples = []
    for _ in range(200):
        t = time.perf_counter_ns()
        for a, p in pairs:
            check(a, p)
        samples.append((time.perf_counter_ns() - t) / len(pairs))
    print(f"python reference check(): {statistics.median(samples):.0f} ns per answer (median of 200 passes over {len(pairs)} answers)")


if __name__ == "__main__":
    main()
