#!/usr/bin/env bash
# Dense search at scale, release build: exact dense ranking
# against the inverted file (`groundcite_index::ann::Ivf`) over synthetic
# chunk vectors derived from the handbook's real ones
# (bench/src/bin/ann.rs says how), the dev questions as queries:
# recall@10 of the approximate ranking against the exact one, p50 / p99 of
# each, the index's build time and memory. Targets at 1M chunks: recall@10
# >= 0.95 with dense p99 <= 20 ms.
#
# The handbook is ingested with the model once into $ANN_DIR (default
# /tmp/groundcite-ann) and reused. 1M chunks holds 9.8 GB of vectors in
# memory (12.5 GB peak), writes them to a temporary vectors file (10 GB, in
# $TMPDIR, removed after) to search it as an index opens it, and takes
# about 8 minutes.
#
# Usage: bench/ann.sh [CHUNKS...]   (default: 100000 1000000)
#        ANN_PROBES=32,64,128 ANN_CANDIDATES=500,1000,2000 ANN_RERANK=0,500 bench/ann.sh
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000)
model="${GROUNDCITE_MODEL_DIR:-$(scripts/fetch-model.sh)}"
cargo build --release -q -p groundcite
cargo build --release -q -p groundcite-bench --bin ann
target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
dir=${ANN_DIR:-/tmp/groundcite-ann}
mkdir -p "$dir"
"$target_dir/release/groundcite" --index "$dir/handbook" ingest \
  ../shared/corpora/tts-handbook/pages --handbook --model-dir "$model" | tail -1
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${sizes[@]}"; do
  "$target_dir/release/ann" "$model" "$dir/handbook" "$n" \
    ../shared/cases/questions-dev.jsonl ../shared/cases/questions-paraphrase-dev.jsonl \
    --probes "${ANN_PROBES:-64,128}" --candidates "${ANN_CANDIDATES:-2000,5000}" \
    --rerank "${ANN_RERANK:-0,200,500}"
done
