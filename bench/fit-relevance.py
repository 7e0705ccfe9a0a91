#!/usr/bin/env python3
"""Fits `answerability.min_relevance`: the lowest threshold at which at most
5% of the tune half's questions would be certified without the fact, in
every file given, and what that threshold gives on the held-out half.

    groundcite --model-dir M --index I eval questions FILE --json > FILE.json
    bench/fit-relevance.py FILE.json [FILE.json ...]

A served answer is certified when it is `supported` and its relevance score
(`answers_question.score`, recorded per question as `relevance_score`)
reaches the threshold; it is certified without the fact when the question is
answerable and the answer lacks the fact, or the question is not answerable.
"""
import json
import sys

MAX_WRONG = 0.05
GRID = [round(0.50 + 0.01 * i, 2) for i in range(41)]


def counts(outcomes, threshold):
    certified = [o for o in outcomes
                 if o["supported"] and (o["relevance_score"] or float("-inf")) >= threshold]
    wrong = sum(1 for o in certified if not o["answerable"] or not o["fact_cited"])
    return wrong, len(certified) - wrong, len(outcomes)


def main(paths):
    runs = {p: json.load(open(p))["outcomes"] for p in paths}
    half = lambda p, h: [o for o in runs[p] if o["half"] == h]
    fitted = None
    for t in GRID:
        if all(counts(half(p, "tune"), t)[0] <= MAX_WRONG * len(half(p, "tune")) for p in paths):
            fitted = t
            break
    if fitted is None:
        sys.exit("fit-relevance: no threshold on the grid keeps the tune half under 5%")
    print(f"min_relevance = {fitted:.2f} (lowest with at most {MAX_WRONG:.0%} of the tune half "
          "certified without the fact, in every file)")
    for p in paths:
        for h in ("tune", "held"):
            wrong, right, n = counts(half(p, h), fitted)
            print(f"  {p} {h}: certified without the fact {wrong}/{n} ({100 * wrong / max(n, 1):.1f}%), "
                  f"certified with it {right}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
