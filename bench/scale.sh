#!/usr/bin/env bash
# Lexical retrieval at scale, release build, one table row per
# size: a synthetic corpus (bench/synth.py: the handbook's sections
# recombined, terms and numbers varied, about 10 chunks a page) ingested by
# groundcite and, on the same chunks in the same run, by SQLite FTS5
# (bench/src/bin/scale.rs: ingest and insert throughput, size on
# disk, search p50/p99 over 508 queries); then `serve` on that index:
# `ask` p50 (extractive, the 108 dev questions, `eval questions --json`)
# and resident memory after answering them over HTTP.
# With a database (SCALE_DATABASE_URL, else GROUNDCITE_TEST_DATABASE_URL:
# eval "$(.ci/pg.sh)"), the same corpus is also ingested into PostgreSQL and
# searched with the same queries (bench/src/bin/scale_pg.rs; a schema
# of its own, dropped after; SCALE_PG_QUERIES=N keeps the first N queries).
# Targets at 1M chunks: BM25 p99 <= half of FTS5's; ingest chunks/s >= FTS5's
# insert chunks/s; `serve` <= 2 GB resident.
#
# Usage: bench/scale.sh [PAGES...]   (default: 985 9850 98500 pages, about
#        10k, 100k and 1M chunks; the corpora are kept in $SCALE_DIR,
#        default /tmp/groundcite-scale, and reused: 1M chunks is 0.9 GB)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(985 9850 98500)
scale_dir=${SCALE_DIR:-/tmp/groundcite-scale}
mkdir -p "$scale_dir"
cargo build --release -q -p groundcite
cargo build --release -q -p groundcite-bench --bin scale --bin scale_pg
database=${SCALE_DATABASE_URL:-${GROUNDCITE_TEST_DATABASE_URL:-}}
target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
bin="$target_dir/release/groundcite"
. bench/serve.sh
. bench/corpus.sh
trap stop_serve EXIT
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
rows=()
for pages in "${sizes[@]}"; do
  corpus="$scale_dir/corpus-$pages"
  synth_corpus "$pages" "$corpus"
  work="$scale_dir/work-$pages"
  "$target_dir/release/scale" "$corpus" "$work" | tee "$work.log" >&2
  figures=$(tail -1 "$work.log")
  pg_figures='{}'
  if [ -n "$database" ]; then
    "$target_dir/release/scale_pg" "$corpus" "$work" "$database" | tee "$work.pg.log" >&2
    pg_figures=$(tail -1 "$work.pg.log")
  fi
  # ask p50 with the extractive generator, lexical retrieval.
  asks=()
  for file in questions-paraphrase-dev questions-dev; do
    GROUNDCITE_MODEL_DIR=off "$bin" --index "$work/index" eval questions "../shared/cases/$file.jsonl" --json > "$work/$file.json"
    asks+=("$work/$file.json")
  done
  ask_p50=$(python3 -c '
import json, statistics, sys
ms = [o["total_ms"] for p in sys.argv[1:] for o in json.load(open(p))["outcomes"]]
print(f"{statistics.median(ms):.1f}")' "${asks[@]}")
  # serve: resident memory after answering the dev questions over HTTP.
  GROUNDCITE_MODEL_DIR= start_serve "$bin" "$work/serve.log" --index "$work/index"
  python3 - "$port" ../shared/cases/questions-paraphrase-dev.jsonl ../shared/cases/questions-dev.jsonl <<'PY'
import json, sys, urllib.parse, urllib.request
port = sys.argv[1]
for path in sys.argv[2:]:
    for line in open(path):
        if line.strip():
            q = json.loads(line)["question"]
            req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/ask", data=json.dumps({"question": q}).encode(),
                                         headers={"content-type": "application/json"})
            json.load(urllib.request.urlopen(req))
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/search?k=10&q={urllib.parse.quote(q)}").read()
PY
  hwm=$(peak_rss_mb)
  stop_serve
  rows+=("$(python3 - "$figures" "$ask_p50" "$hwm" "$pg_figures" <<'PY'
import json, sys
f = json.loads(sys.argv[1])
ask, hwm = sys.argv[2], sys.argv[3]
pg = json.loads(sys.argv[4])
pg_cells = (f" | {pg['pg_chunks_per_s']:,.0f} chunks/s | {pg['pg_p50_ms']:.1f} / {pg['pg_p99_ms']:.1f} ms ({pg['pg_queries']} queries)"
            if pg else " | - | -")
print(
    f"| {f['chunks']:,} | {f['source_mb']:.0f} MB"
    f" | {f['ingest_chunks_per_s']:,.0f} chunks/s, {f['ingest_mb_per_s']:.1f} MB/s"
    f" | {f['fts5_chunks_per_s']:,.0f} chunks/s"
    f" | {f['index_mb']:.0f} MB / {f['fts5_mb']:.0f} MB"
    f" | {f['bm25_p50_ms']:.2f} / {f['bm25_p99_ms']:.2f} ms"
    f" | {f['fts5_p50_ms']:.2f} / {f['fts5_p99_ms']:.2f} ms"
    f" | {ask} ms | {hwm} MB"
    + pg_cells + " |"
)
PY
)")
done
echo
echo "| chunks | source | groundcite ingest (lexical) | SQLite FTS5 insert | on disk: groundcite / FTS5 | BM25 search p50 / p99 | FTS5 search p50 / p99 | ask p50 (extractive) | serve peak RSS | PostgreSQL ingest | PostgreSQL search p50 / p99 |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
