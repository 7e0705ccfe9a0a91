#!/usr/bin/env bash
# groundcite end to end with a real model: builds llama.cpp's
# OpenAI-compatible server from PyPI (llama-cpp-python[server], pinned),
# fetches SmolLM2-135M-Instruct (scripts/fetch-llm.sh, checksummed), starts
# it on loopback and runs bench/llm_e2e.py: `ask` over a sample of the dev
# questions in free-text and structured modes, streaming and not, through
# the CLI and /v1/ask; it asserts the invariants and prints the rates and
# latencies. Run by .ci/run.
#
#   .ci/llm.sh                  install when needed, then run the suite
#   .ci/llm.sh --install-only   only build and install the server (.ci/run
#                               starts this at low priority at its start, so
#                               the build fills the cores its tests leave idle)
#   .ci/llm.sh --run CMD [ARG]  start the server, then run CMD instead of the
#                               suite, with BASE_URL, MODEL and GROUNDCITE_BIN
#                               exported (bench/judge.sh)
#
# Cost on a fresh 2-core machine: the llama.cpp build is most of it (10-20
# min alone, once: pip keeps the built wheel in its cache and the venv is
# reused); the suite itself takes about 5 minutes.
#
# Environment: GROUNDCITE_LLAMA_VENV (default ~/.cache/groundcite/llama-venv),
# GROUNDCITE_LLM_PORT (default 8765), GROUNDCITE_BIN (the groundcite binary;
# built with cargo when unset), and bench/llm_e2e.py's (SAMPLE,
# STREAM_SAMPLE, DEADLINE, MODES, MAX_TOKENS, REPORT).
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_PYTHON="llama-cpp-python[server]==0.3.36"
venv="${GROUNDCITE_LLAMA_VENV:-$HOME/.cache/groundcite/llama-venv}"
port="${GROUNDCITE_LLM_PORT:-8765}"

if ! "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  echo "llm: installing $LLAMA_CPP_PYTHON into $venv (builds llama.cpp unless pip has the wheel)"
  python3 -m venv "$venv"
  # -DGGML_NATIVE=OFF: a native build uses AMX instructions that these
  # virtual machines advertise but fault on (SIGILL at the first completion).
  CMAKE_ARGS="-DGGML_NATIVE=OFF" "$venv/bin/pip" install --quiet "$LLAMA_CPP_PYTHON"
fi
gguf="$(scripts/fetch-llm.sh)"
if [ "${1:-}" = "--install-only" ]; then
  echo "llm: llama.cpp's server is installed in $venv; the model is $gguf"
  exit 0
fi

if [ -z "${GROUNDCITE_BIN:-}" ]; then
  cargo build -q -p groundcite
  target_dir=${CARGO_TARGET_DIR:-target}
  case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
  GROUNDCITE_BIN="$target_dir/debug/groundcite"
fi
[ -x "$GROUNDCITE_BIN" ] || { echo "llm: $GROUNDCITE_BIN is not an executable" >&2; exit 1; }
export GROUNDCITE_BIN

log="$(mktemp -t groundcite-llama-server.XXXXXX.log)"
"$venv/bin/python" -m llama_cpp.server --model "$gguf" --model_alias smollm2 \
  --host 127.0.0.1 --port "$port" --n_ctx 4096 --n_threads 2 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do
  if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/v1/models', timeout=2)" 2>/dev/null; then
    break
  fi
  kill -0 $server 2>/dev/null || { tail -n 30 "$log" >&2; echo "llm: the model server exited" >&2; exit 1; }
  sleep 0.5
done
export BASE_URL="http://127.0.0.1:$port" MODEL=smollm2
if [ "${1:-}" = "--run" ]; then
  shift
  "$@"
else
  python3 bench/llm_e2e.py
fi
