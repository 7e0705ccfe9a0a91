#!/usr/bin/env bash
# The trained judges' figures beside the lexical and semantic paths, each
# per half of the by-page split:
# - support: paraphrase-dev and dev cases (`eval cases`), HaluEval QA rows
#   0-1999 (`eval halueval`), with check.verifier = trained;
# - answerability: `eval questions` on both handbook question files with
#   answerability.scorer = trained (and the embedding scorer beside it).
#
#   bench/judges.sh GROUNDCITE_BIN MODEL_DIR [JUDGES_DIR] [INDEX_DIR]
#
# JUDGES_DIR defaults to models/groundcite-judges. INDEX_DIR is a handbook
# index ingested with the model (made in a temporary folder when not given:
# minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: bench/judges.sh GROUNDCITE_BIN MODEL_DIR [JUDGES_DIR] [INDEX_DIR]}
model=${2:?usage: bench/judges.sh GROUNDCITE_BIN MODEL_DIR [JUDGES_DIR] [INDEX_DIR]}
judges=${3:-models/groundcite-judges}
index=${4:-}
shared=../shared
[ -d "$shared/cases" ] || { echo "judges: $shared/cases is missing" >&2; exit 1; }
started=$SECONDS
trained=(--model-dir "$model" --judges-dir "$judges")

for file in paraphrase-dev dev; do
  for verifier in lexical semantic trained; do
    echo "== $file.jsonl, verifier $verifier"
    "$bin" "${trained[@]}" --set check.verifier=$verifier eval cases "$shared/cases/$file.jsonl" \
      | sed -n '/^verifier:/,$p'
  done
done
for verifier in lexical trained; do
  echo "== HaluEval QA rows 0-1999, verifier $verifier"
  "$bin" "${trained[@]}" --set check.verifier=$verifier eval halueval "$shared/datasets/halueval/qa-dev.jsonl"
done

if [ -z "$index" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  index=$work/semantic
  "$bin" --model-dir "$model" --index "$index" ingest "$shared/corpora/tts-handbook/pages" >/dev/null 2>&1
fi
for file in questions-dev questions-paraphrase-dev; do
  for scorer in embedding trained; do
    echo "== $file.jsonl, answerability.scorer $scorer"
    "$bin" "${trained[@]}" --index "$index" --set answerability.scorer=$scorer \
      eval questions "$shared/cases/$file.jsonl"
  done
done
echo "judges: took $((SECONDS - started)) s"
