#!/usr/bin/env bash
# The worst checks a request inside the limits can ask for
# (bench/src/bin/worst_check.rs): one sentence of "[1](" x 65,000,
# one of 36,000 distinct words, 4,000 sentences over a 250 KB passage, over
# 64 passages cited as [1-64] or not cited at all (refused by
# check.limits.max_aligned_bytes), 4,000 sentences citing 100 one-sentence
# passages, and the same with as many sentences as the limit admits. Each case runs in its own process under /usr/bin/time: its
# CPU seconds (user + system) must stay under the bound (default 1 s), or
# the script fails.
#
# Usage: bench/worst-check.sh [BOUND_SECS]
set -euo pipefail
cd "$(dirname "$0")/.."
bound=${1:-1.0}
cargo build --release -q -p groundcite-bench --bin worst_check
target_dir=${CARGO_TARGET_DIR:-target}
bin="$target_dir/release/worst_check"
fail=0
printf '%-15s %-14s %-9s %s\n' case bytes cpu_s outcome
for c in links words sentences wide uncited many sentences-max wide-max uncited-max; do
  out=$( { /usr/bin/time -f '%U %S' "$bin" "$c"; } 2>&1 )
  line=$(printf '%s\n' "$out" | head -1)
  cpu=$(printf '%s\n' "$out" | tail -1 | awk '{printf "%.2f", $1 + $2}')
  bytes=$(printf '%s' "$line" | cut -f2)
  outcome=$(printf '%s' "$line" | cut -f4)
  printf '%-15s %-14s %-9s %s\n' "$c" "$bytes" "$cpu" "$outcome"
  if awk -v c="$cpu" -v b="$bound" 'BEGIN { exit !(c > b) }'; then
    echo "  over the bound of $bound s" >&2
    fail=1
  fi
done
exit $fail
