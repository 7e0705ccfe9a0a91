#!/usr/bin/env bash
# check() from Python against the Rust call it wraps, on the same cases
# (the target: within 2x). Builds the release wheel, installs it into a
# virtual environment, times both sides and prints the ratio.
#
#   bench/python-check.sh [CASES.jsonl] [PASSES]
#
# Default cases: ../shared/cases/dev.jsonl (the contract's worked examples and
# handbook cases). VENV (default target/py-bench-venv) is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-../shared/cases/dev.jsonl}
passes=${2:-200}
venv=${VENV:-target/py-bench-venv}
target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac

case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q "maturin==1.16.0"
rm -rf "$target_dir/wheels-bench"
(cd python && CARGO_TARGET_DIR="$target_dir" "$venv/bin/maturin" build --release \
  -i "$venv/bin/python" --out "$target_dir/wheels-bench" >/dev/null)
"$venv/bin/pip" install -q --force-reinstall --no-deps "$target_dir"/wheels-bench/groundcite-*.whl

rust=$(cargo run -q --release -p groundcite-bench --bin check_timing -- "$cases" "$passes")
py=$("$venv/bin/python" bench/python_binding.py "$cases" "$passes")
echo "$rust"
echo "$py"
r=$(echo "$rust" | grep -o '[0-9]* ns' | head -1 | grep -o '[0-9]*')
p=$(echo "$py" | head -1 | grep -o '[0-9]* ns' | head -1 | grep -o '[0-9]*')
python3 -c "print(f'python check() / rust call: {$p/$r:.2f}x (target: at most 2x)')"
