#!/usr/bin/env bash
# The PostgreSQL index against the embedded one on the TTS handbook:
# gold-page recall@3/5/8 on questions-dev, best-score distributions and the
# calibrated gate threshold of each backend, and search latency (median, p95)
# measured interleaved on the same questions.
#
#   eval "$(.ci/pg.sh)"                 # or any database you own
#   bench/pg-vs-embedded.sh [QUESTIONS.jsonl]
#
# Starts nothing: it needs GROUNDCITE_TEST_DATABASE_URL (a database where it
# may create and drop the schema bench_search_<pid>). GROUNDCITE_BENCH_ROUNDS
# (default 20) sets the latency rounds. Release build; the output ends with a
# side-by-side table.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${GROUNDCITE_TEST_DATABASE_URL:-}" ]; then
    echo "pg-vs-embedded: GROUNDCITE_TEST_DATABASE_URL is not set (eval \"\$(.ci/pg.sh)\" starts a local server)" >&2
    exit 2
fi
exec cargo bench -q -p groundcite-pg --bench search -- "$@"
