#!/usr/bin/env bash
# Batch checking on all cores: `groundcite check --cases` over a
# large JSONL file, on one core and on two (`taskset`), release build.
#   1. the file: the labelled answers of ../shared/cases (dev.jsonl and
#      paraphrase-dev.jsonl, 100 cases) repeated with distinct ids up to
#      N answers (default 112,000), deterministic;
#   2. wall time and peak RSS on cores {0} and {0,1}; the two outputs must
#      be byte for byte the same (target: ≥ 1.8x faster on 2 cores);
#   3. the compact output (`--fields id,status,grounded,counts`): wall time
#      and bytes written, against the whole report.
# The verifier is the configured one (lexical by default).
#
# Usage: bench/batch-check.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-112000}
cargo build --release -q -p groundcite
target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
bin="$target_dir/release/groundcite"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$n" "$dir/cases.jsonl" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
cases = []
for f in ["dev.jsonl", "paraphrase-dev.jsonl"]:
    with open(f"../shared/cases/{f}") as fh:
        cases += [json.loads(l) for l in fh if l.strip()]
with open(path, "w") as out:
    for i in range(n):
        case = dict(cases[i % len(cases)])
        case["id"] = f"{case['id']}-{i // len(cases)}"
        out.write(json.dumps(case) + "\n")
PY
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "input: $n answers, $(du -m "$dir/cases.jsonl" | cut -f1) MB"
run() { # name cores out args...
  local name=$1 cores=$2 out=$3
  shift 3
  /usr/bin/time -f "%e %M" -o "$dir/time" taskset -c "$cores" "$bin" check --cases "$dir/cases.jsonl" --fail-on none "$@" > "$out"
  read -r wall rss < "$dir/time"
  echo "$name: ${wall} s wall, $((rss / 1024)) MB peak RSS, $(du -m "$out" | cut -f1) MB written" >&2
  echo "$wall"
}
one=$(run "1 core " 0 "$dir/one.jsonl")
two=$(run "2 cores" 0,1 "$dir/two.jsonl")
cmp -s "$dir/one.jsonl" "$dir/two.jsonl" || { echo "outputs differ between 1 and 2 cores" >&2; exit 1; }
echo "outputs identical: yes"
python3 -c "print(f'speed-up on 2 cores: {$one / $two:.2f}x (target >= 1.8x)')"
run "2 cores, --fields id,status,grounded,counts" 0,1 "$dir/compact.jsonl" --fields id,status,grounded,counts > /dev/null
