#!/usr/bin/env bash
# Streaming cost with a real model: the time to the first
# validated sentence of `POST /v1/ask` (stream) against the model's own time
# to that sentence, measured through a timing proxy (bench/stream_cost.py).
# Starts llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct on
# loopback (installed and fetched as .ci/llm.sh does), release build.
#
# Usage: bench/stream-cost.sh      (SAMPLE, MAX_TOKENS, REPORT: see the .py)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--served" ]; then
  cargo build --release -q -p groundcite
  target_dir=${CARGO_TARGET_DIR:-target}
  case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
  export GROUNDCITE_BIN="$target_dir/release/groundcite"
  exec .ci/llm.sh --run bench/stream-cost.sh --served
fi
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/stream_cost.py
