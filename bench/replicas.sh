#!/usr/bin/env bash
# Two stateless `groundcite serve` replicas on one PostgreSQL database (index
# and audit log), under a bounded mixed load (/v1/ask and /v1/check) for at
# least 30 s, one re-ingest mid-way, one replica SIGKILLed mid-load. Checks
# that every answer has exactly one audit record, that the survivor keeps
# answering (>= 99%), and that the re-ingest is visible on both replicas.
# See bench/replicas.py for the details; prints a summary table.
#
# Needs GROUNDCITE_TEST_DATABASE_URL (eval "$(.ci/pg.sh)") with the right to
# CREATE DATABASE, psql and python3. Loopback only.
#
# Usage: bench/replicas.sh            (debug build: what CI has built anyway)
#        PROFILE=release bench/replicas.sh
# Knobs: DURATION (40 s), INGEST_AT (10), KILL_AT (20), WORKERS (3 per
# server), MAX_REQUESTS (200000), KEEP=1 keeps the database and logs.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${GROUNDCITE_TEST_DATABASE_URL:?run eval \"\$(.ci/pg.sh)\" first}"
. bench/build.sh
exec python3 bench/replicas.py
