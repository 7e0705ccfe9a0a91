#!/usr/bin/env bash
# Hybrid search at scale through `groundcite serve`, release
# build: a synthetic corpus (bench/synth.py, as bench/scale.sh) ingested
# with synthetic vectors (bench/src/bin/synthetic_vectors.rs: each
# chunk's and unit's vector a noisy copy of one of the handbook's, under the
# model's id; embedding a million chunks on 2 cores would take hours), then
# `serve --model-dir` on it: the 108 dev questions over HTTP, `/v1/search`
# (hybrid, k=10) and `/v1/ask` (extractive) p50 / p99 as a client sees
# them (after one untimed pass, so the rows read are in the page cache),
# and the server's peak resident memory; then the parts of hybrid search
# timed in process (bench/src/bin/hybrid_scale.rs: BM25, dense,
# both, with and without the embedding), one table per size. With
# SCALE_DATABASE_URL (a database where the schema groundcite_scale_hybrid
# may be created; kept after the run, `DROP SCHEMA groundcite_scale_hybrid
# CASCADE` removes it), the same corpus with the same vectors is also
# ingested into PostgreSQL and searched hybrid with the same questions
# (bench/src/bin/hybrid_scale_pg.rs), its top 10 compared with the
# embedded index's. Targets at 1M chunks: `serve` <= 2 GB resident; hybrid
# p99 <= 30 ms; PostgreSQL hybrid p99 <= 100 ms.
#
# Usage: bench/scale-dense.sh [PAGES...]   (default: 98500 pages, about 1M
#        chunks; corpora kept in $SCALE_DIR, default /tmp/groundcite-scale;
#        the handbook with vectors in $ANN_DIR, default /tmp/groundcite-ann)
#        REUSE_INDEX=1 searches the index an earlier run left in $SCALE_DIR
#        (dense-PAGES) rather than ingesting it again (about 3 minutes at
#        1M); the table's ingest figures are then that run's.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(98500)
scale_dir=${SCALE_DIR:-/tmp/groundcite-scale}
ann_dir=${ANN_DIR:-/tmp/groundcite-ann}
mkdir -p "$scale_dir" "$ann_dir"
model="${GROUNDCITE_MODEL_DIR:-$(scripts/fetch-model.sh)}"
cargo build --release -q -p groundcite
cargo build --release -q -p groundcite-bench --bin synthetic_vectors --bin hybrid_scale
database=${SCALE_DATABASE_URL:-}
[ -z "$database" ] || cargo build --release -q -p groundcite-bench --bin hybrid_scale_pg
target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
bin="$target_dir/release/groundcite"
"$bin" --index "$ann_dir/handbook" ingest ../shared/corpora/tts-handbook/pages --handbook \
  --model-dir "$model" | tail -1
. bench/serve.sh
. bench/corpus.sh
trap stop_serve EXIT
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
rows=()
for pages in "${sizes[@]}"; do
  corpus="$scale_dir/corpus-$pages"
  synth_corpus "$pages" "$corpus"
  work="$scale_dir/dense-$pages"
  if [ "${REUSE_INDEX:-}" = 1 ] && [ -f "$work/meta.json" ] && [ -s "$work.log" ]; then
    echo "reusing $work (REUSE_INDEX=1; its ingest figures are those of $work.log)"
  else
    rm -rf "$work"
    "$target_dir/release/synthetic_vectors" "$ann_dir/handbook" "$corpus" "$work" \
      | tee "$work.log"
  fi
  figures=$(tail -1 "$work.log")
  start_serve "$bin" "$work.serve.log" --index "$work" --model-dir "$model"
  timings=$(python3 - "$port" ../shared/cases/questions-paraphrase-dev.jsonl ../shared/cases/questions-dev.jsonl <<'PY'
import json, statistics, sys, time, urllib.parse, urllib.request
port = sys.argv[1]
questions = [json.loads(l)["question"] for p in sys.argv[2:] for l in open(p) if l.strip()]
def timed(f):
    t = time.perf_counter(); f(); return (time.perf_counter() - t) * 1e3
def search(q):
    json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/search?k=10&q={urllib.parse.quote(q)}"))
def ask(q):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/ask", data=json.dumps({"question": q}).encode(),
                                 headers={"content-type": "application/json"})
    body = json.load(urllib.request.urlopen(req))
    assert body["retrieval"] == "hybrid", body.get("retrieval")
# One pass first, untimed: the rows the questions read come into the page
# cache (an ingest just wrote 10 GB, and its own memory pushed them out).
for q in questions:
    search(q)
s = sorted(timed(lambda: search(q)) for q in questions)
a = sorted(timed(lambda: ask(q)) for q in questions)
pct = lambda v, p: v[round((len(v) - 1) * p)]
print(json.dumps({"search_p50": pct(s, .5), "search_p99": pct(s, .99), "ask_p50": pct(a, .5), "ask_p99": pct(a, .99)}))
PY
)
  hwm=$(peak_rss_mb)
  stop_serve
  echo "in process, $work:"
  "$target_dir/release/hybrid_scale" "$model" "$work" \
    ../shared/cases/questions-dev.jsonl ../shared/cases/questions-paraphrase-dev.jsonl
  pg='{}'
  if [ -n "$database" ]; then
    echo "PostgreSQL, $corpus:"
    REUSE=${REUSE_INDEX:-} "$target_dir/release/hybrid_scale_pg" "$ann_dir/handbook" "$corpus" \
      "$database" "$model" ../shared/cases/questions-dev.jsonl ../shared/cases/questions-paraphrase-dev.jsonl \
      --compare "$work" | tee "$work.pg.log"
    pg=$(tail -1 "$work.pg.log")
  fi
  rows+=("$(python3 - "$figures" "$timings" "$hwm" "$pg" <<'PY'
import json, sys
f, t, hwm, pg = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
ingest = pg.get("ingest") or {}
pg_cells = (
    (f" | {ingest['chunks'] / ingest['ingest_s']:,.0f} chunks/s ({ingest['ingest_s']:.0f} s)" if ingest else " | (reused)")
    + f" | {pg['pg_hybrid_p50_ms']:.1f} / {pg['pg_hybrid_p99_ms']:.1f} ms | {pg['top10_overlap_with_embedded']:.2f}"
) if pg else " | - | - | -"
print(
    f"| {f['chunks']:,} | {f['ingest_chunks_per_s']:,.0f} chunks/s ({f['ingest_s']:.0f} s, peak {f['peak_rss_mb']:,.0f} MB)"
    f" | {f['index_mb']:,.0f} MB | {t['search_p50']:.1f} / {t['search_p99']:.1f} ms"
    f" | {t['ask_p50']:.1f} / {t['ask_p99']:.1f} ms | {hwm} MB" + pg_cells + " |"
)
PY
)")
done
echo
echo "| chunks | ingest with synthetic vectors (embedding aside) | on disk | hybrid /v1/search p50 / p99 (HTTP, k=10) | /v1/ask p50 / p99 (extractive) | serve peak RSS | PostgreSQL ingest with vectors (and its HNSW index) | PostgreSQL search_hybrid p50 / p99 (vector given, k=10) | PostgreSQL top 10 shared with embedded |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
