#!/usr/bin/env bash
# The LLM judge (check.verifier = "llm") with a real model: starts
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
# built), GROUNDCITE_LLM_PORT (default 8765), OUT (default target/judge),
# and any GROUNDCITE_* setting, e.g. GROUNDCITE_JUDGE__CONCURRENCY.
set -euo pipefail
cd "$(dirname "$0")/.."
# .ci/llm.sh installs and starts the model server, then runs this script
# again (with --served) with BASE_URL and MODEL set.
if [ "${1:-}" != "--served" ]; then
  exec .ci/llm.sh --run bench/judge.sh --served "$@"
fi
shift
cases="${1:-../shared/cases/paraphrase-dev.jsonl}"
[ -f "$cases" ] || { echo "judge: $cases not found" >&2; exit 1; }
out="${OUT:-target/judge}"
mkdir -p "$out"
model="${GROUNDCITE_MODEL_DIR:-$(scripts/fetch-model.sh)}"

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
echo "== the LLM judge ($MODEL) over the semantic verifier"
# json_object: llama-cpp-python 0.3.x refuses OpenAI's json_schema form.
run llm --set check.verifier=llm --set judge.backend=openai \
  --set openai.base_url="$BASE_URL" --set openai.model="$MODEL" \
  --set openai.structured=json_object
echo "judge: $((SECONDS - started)) s for the judge's run; every sentence judged wrong in $out/*.txt"
