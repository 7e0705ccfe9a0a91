#!/usr/bin/env bash
# Side by side: the citation contract's reference Python check() and
# groundcite's structural check
# on the same dev answers. Prints ns per answer for both and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
cases=../shared/cases/dev.jsonl
py=$(python3 bench/python_check.py "$cases" | grep -o '[0-9]* ns' | grep -o '[0-9]*')
n=$(grep -c . "$cases")
cargo bench -q -p groundcite-core --bench check -- structural/dev_answers_reused_report --noplot 2>/dev/null | tee /tmp/gc-bench.txt | grep -E "time:" || true
# criterion reports the time of one pass over all answers: [low mid high]
mid=$(grep -A1 "dev_answers_reused_report" /tmp/gc-bench.txt | grep -o 'time: *\[[^]]*\]' | awk '{print $4, $5}')
value=${mid% *}; unit=${mid#* }
case "$unit" in ns) f=1;; µs|us) f=1000;; ms) f=1000000;; *) f=1;; esac
rust=$(python3 -c "print(round($value*$f/$n, 1))")
echo "python reference check(): ${py} ns/answer"
echo "groundcite structural check: ${rust} ns/answer"
python3 -c "print(f'speed-up: {${py}/${rust}:.0f}x')"
