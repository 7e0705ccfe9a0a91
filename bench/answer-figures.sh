#!/usr/bin/env bash
# The answer figures of `eval questions` on the handbook's two question
# files, lexical and with the embedding model: answered with the fact and
# cited, certified without the fact, refusals, over every question and per
# half of the by-page split.
#
#   bench/answer-figures.sh GROUNDCITE_BIN [MODEL_DIR]
#
# Needs ../shared beside the checkout. MODEL_DIR defaults to
# $GROUNDCITE_MODEL_DIR; without one (or with `off`) only the lexical
# figures are printed.
# The indexes go to a temporary folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: bench/answer-figures.sh GROUNDCITE_BIN [MODEL_DIR]}
model=${2:-${GROUNDCITE_MODEL_DIR:-}}
[ "$model" = off ] && model=
shared=../shared
pages=$shared/corpora/tts-handbook/pages
[ -d "$pages" ] || { echo "answer-figures: $pages is missing" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

figures() { # label, index, extra flags...
  local label=$1 index=$2; shift 2
  for file in questions-dev questions-paraphrase-dev; do
    echo "== $file, $label"
    "$bin" --index "$index" "$@" eval questions "$shared/cases/$file.jsonl"
  done
}

started=$SECONDS
"$bin" --model-dir off --index "$work/lexical" ingest "$pages" >/dev/null 2>&1
figures "lexical (no model)" "$work/lexical" --model-dir off
if [ -n "$model" ]; then
  "$bin" --model-dir "$model" --index "$work/semantic" ingest "$pages" >/dev/null 2>&1
  echo "answer-figures: ingest with the model took $((SECONDS - started)) s"
  figures "with the embedding model" "$work/semantic" --model-dir "$model"
fi
echo "answer-figures: took $((SECONDS - started)) s"
