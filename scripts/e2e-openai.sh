#!/usr/bin/env bash
# End-to-end check of `groundcite ask` against a real OpenAI-compatible server.
#
# Opt-in and manual: it needs a model server you started yourself, and is
# never run by `cargo test`.
#
# Usage:
#   scripts/e2e-openai.sh                      # llama.cpp server on 127.0.0.1:8765
#   BASE_URL=http://127.0.0.1:11434 MODEL=llama3.2 scripts/e2e-openai.sh   # Ollama
#   BASE_URL=https://api.openai.com MODEL=gpt-4o-mini OPENAI_API_KEY=sk-... scripts/e2e-openai.sh
#
# Environment:
#   BASE_URL    the server, with or without a trailing /v1
#               (default http://127.0.0.1:8765, llama-cpp-python's server as
#               described in /work/shared/CRATES.md)
#   MODEL       the model name the server expects (default: gemma-3-270m;
#               llama.cpp serves whatever model it loaded under any name)
#   EXTRA_ARGS  more arguments for `groundcite ask`, e.g. "--stream"
#   OPENAI_API_KEY  only for hosted APIs; local servers need none
#
# Starting a local server (from CRATES.md):
#   python3 -m venv v && v/bin/pip install "llama-cpp-python[server]==0.3.36"
#   v/bin/python -m llama_cpp.server --model gemma-3-270m-q4_k_m.gguf --host 127.0.0.1 --port 8765
# or, with Ollama installed:  ollama pull llama3.2 && ollama serve
#
# What to expect: each question prints the answer with its [k] markers and
# groundcite's verdict. A small base model often cites passages that were
# never sent, or invents numbers; seeing groundcite regenerate once and then
# refuse is the point of the exercise, not a failure of this script. The
# last question is not covered by the documents and should be refused.
set -euo pipefail

BASE_URL="${BASE_URL:-http://127.0.0.1:8765}"
MODEL="${MODEL:-gemma-3-270m}"
EXTRA_ARGS="${EXTRA_ARGS:-}"

cd "$(dirname "$0")/.."

# Fail early, with a useful message, when nothing listens at BASE_URL.
models_url="${BASE_URL%/}"
models_url="${models_url%/v1}/v1/models"
if command -v curl >/dev/null 2>&1; then
  if ! curl -fsS --max-time 5 ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} "$models_url" >/dev/null; then
    echo "error: no OpenAI-compatible server answers at $models_url" >&2
    echo "start one (see the comments at the top of $0) or set BASE_URL" >&2
    exit 2
  fi
fi

echo "== building groundcite (release)"
cargo build --release --quiet

questions=(
  "How long does reimbursement take?"
  "Are per diem claims paid on the same schedule?"
  "Does the plan cover home office furniture?"
)

status=0
for question in "${questions[@]}"; do
  echo
  echo "== $question"
  started=$(date +%s.%N)
  # shellcheck disable=SC2086 # EXTRA_ARGS is split on purpose
  if ! cargo run --release --quiet -- ask \
      --generator openai \
      --base-url "$BASE_URL" \
      --model "$MODEL" \
      $EXTRA_ARGS \
      "$question"; then
    echo "!! groundcite ask failed for: $question" >&2
    status=1
  fi
  ended=$(date +%s.%N)
  awk -v a="$started" -v b="$ended" 'BEGIN { printf "-- %.1f s\n", b - a }'
done
exit $status
