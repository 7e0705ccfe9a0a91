#!/usr/bin/env bash
# groundcite's embedder and sentence-transformers on PyTorch, side by side,
# on the texts an ingest of the handbook embeds (each chunk's text and each
# answer unit's), with the same model folder and the same threads; prints
# both throughputs and the cosine between their vectors.
#
#   bench/embed-side-by-side.sh [PAGES_DIR]
#
# Environment: GROUNDCITE_MODEL_DIR (else fetched), THREADS (default 2),
# PYTHON (a python with torch, numpy and sentence-transformers; default the
# training environment's, train/.venv or $TRAIN_VENV, where
# sentence-transformers==6.3.0 is installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
pages=${1:-../shared/corpora/tts-handbook/pages}
threads=${THREADS:-2}
model="${GROUNDCITE_MODEL_DIR:-}"
[ -n "$model" ] && [ "$model" != off ] || model="$(scripts/fetch-model.sh | tail -1)"
venv=${TRAIN_VENV:-train/.venv}
python=${PYTHON:-$venv/bin/python}
if [ ! -x "$python" ]; then
  echo "embed-side-by-side: no python at $python: run train/run.sh --smoke once, or set PYTHON" >&2
  exit 1
fi
"$python" -c "import sentence_transformers" 2>/dev/null \
  || "$python" -m pip install -q sentence-transformers==6.3.0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo build --release -q -p groundcite-bench --bin embed_texts
bin="${CARGO_TARGET_DIR:-target}/release/embed_texts"
"$bin" dump "$pages" "$work/texts.jsonl"
RAYON_NUM_THREADS=$threads "$bin" run "$model" "$work/texts.jsonl" "$work/groundcite.f32"
EMBED_VECTORS="$work/groundcite.f32" "$python" bench/embed_pytorch.py "$model" "$work/texts.jsonl" "$threads"
