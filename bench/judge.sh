#!/usr/bin/env bash
# The LLM judge (check.verifier = "llm", issue 18) with a real model: starts
# llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct on
# loopback (installed and fetched as .ci/llm.sh does), then scores
# ../shared/cases/paraphrase-dev.jsonl with the judge over the semantic
# verifier (all-MiniLM-L6-v2), and, for comparison, with the semantic
# verifier alone. Prints both tables (all, tune half, held-out half, per
# kind), and keeps each run's list of sentences judged wrong.
#
# Cost on 2 cores: about 230 judge requests at 2-3 s each, 10-15 min.
#
# Usage: bench/judge.sh [CASES]   (default ../shared/cases/paraphrase-dev.jsonl)
# Environment: GROUNDCITE_MODEL_DIR (else fetched), GROUNDCITE_BIN (else
# built), GROUNDCITE_LLM_PORT (default 8766, beside .ci/llm.sh's 8765),
# OUT (default target/judge), and any GROUNDCITE_* setting, e.g.
# GROUNDCITE_JUDGE__CONCURRENCY.
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-../shared/cases/paraphrase-dev.jsonl}"
[ -f "$cases" ] || { echo "judge: $cases not found" >&2; exit 1; }
port="${GROUNDCITE_LLM_PORT:-8766}"
venv="${GROUNDCITE_LLAMA_VENV:-$HOME/.cache/groundcite/llama-venv}"
out="${OUT:-target/judge}"
mkdir -p "$out"

.ci/llm.sh --install-only >&2
gguf="$(scripts/fetch-llm.sh)"
model="${GROUNDCITE_MODEL_DIR:-$(scripts/fetch-model.sh)}"
if [ -z "${GROUNDCITE_BIN:-}" ]; then
  cargo build -q -p groundcite
  target_dir=${CARGO_TARGET_DIR:-target}
  case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
  GROUNDCITE_BIN="$target_dir/debug/groundcite"
fi

log="$out/llama-server.log"
"$venv/bin/python" -m llama_cpp.server --model "$gguf" --model_alias smollm2 \
  --host 127.0.0.1 --port "$port" --n_ctx 4096 --n_threads 2 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do
  if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/v1/models', timeout=2)" 2>/dev/null; then
    break
  fi
  kill -0 $server 2>/dev/null || { tail -n 30 "$log" >&2; echo "judge: the model server exited" >&2; exit 1; }
  sleep 0.5
done

# The table (and every sentence judged wrong, kept in $out/NAME.txt).
run() {
  local name=$1
  shift
  "$GROUNDCITE_BIN" --model-dir "$model" "$@" eval cases "$cases" >"$out/$name.txt" || true
  grep -v '^!!' "$out/$name.txt"
}

echo "== semantic verifier alone"
run semantic --set check.verifier=semantic
started=$SECONDS
echo "== the LLM judge (SmolLM2-135M-Instruct) over the semantic verifier"
# json_object: llama-cpp-python 0.3.x refuses OpenAI's json_schema form.
run llm --set check.verifier=llm --set judge.backend=openai \
  --set openai.base_url="http://127.0.0.1:$port" --set openai.model=smollm2 \
  --set openai.structured=json_object
requests=$(grep -c 'POST /v1/chat/completions' "$log" || true)
echo "judge: $requests requests in $((SECONDS - started)) s; every sentence judged wrong in $out/*.txt"
