#!/usr/bin/env bash
# Starts a throwaway PostgreSQL for groundcite's PostgreSQL tests and benches.
#
#   eval "$(.ci/pg.sh)"            # start (or reuse) it and export the URL
#   .ci/pg.sh stop                 # stop it (the data directory stays)
#   .ci/pg.sh destroy              # stop it and remove the data directory
#
# Installs Debian's `postgresql` if no server binaries are found, initialises
# a cluster as the `postgres` user in $GROUNDCITE_PG_DIR (default
# /tmp/groundcite-pg), starts it on 127.0.0.1:$GROUNDCITE_PG_PORT (default
# 55432; Unix socket in the data directory), creates the role `groundcite`
# with a password and the database `groundcite_test`, and prints
#
#   export GROUNDCITE_TEST_DATABASE_URL=postgres://groundcite:...@127.0.0.1:55432/groundcite_test
#
# on stdout (everything else goes to stderr), and writes the same line to
# $GROUNDCITE_PG_DIR/env for `source`. Idempotent: running it again reuses a
# running server, restarts a stopped one, and re-creates a missing role or
# database. Must run as root (to install and to switch to `postgres`) or as
# the `postgres` user itself.
set -euo pipefail

PORT="${GROUNDCITE_PG_PORT:-55432}"
BASE="${GROUNDCITE_PG_DIR:-/tmp/groundcite-pg}"
DATA="$BASE/data"
LOG="$BASE/server.log"
ROLE=groundcite
PASSWORD="${GROUNDCITE_PG_PASSWORD:-groundcite-test}"
DB=groundcite_test

log() { echo "pg.sh: $*" >&2; }

as_postgres() {
    if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi
}

find_bin() {
    local d
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
    done
    return 1
}

BIN="$(find_bin || true)"
if [ -z "$BIN" ]; then
    log "installing postgresql from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >&2
    BIN="$(find_bin)"
fi

case "${1:-start}" in
    stop)
        [ -f "$DATA/postmaster.pid" ] && as_postgres "$BIN/pg_ctl" -D "$DATA" -m fast stop >&2 || true
        exit 0 ;;
    destroy)
        [ -f "$DATA/postmaster.pid" ] && as_postgres "$BIN/pg_ctl" -D "$DATA" -m fast stop >&2 || true
        rm -rf "$BASE"
        exit 0 ;;
    start) ;;
    *) log "usage: $0 [start|stop|destroy]"; exit 2 ;;
esac

mkdir -p "$BASE"
chown postgres:postgres "$BASE" 2>/dev/null || true
if [ ! -f "$DATA/PG_VERSION" ]; then
    log "initialising a cluster in $DATA"
    as_postgres "$BIN/initdb" -D "$DATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
        -E UTF8 --locale=C.UTF-8 >&2
    {
        echo "listen_addresses = '127.0.0.1'"
        echo "port = $PORT"
        echo "unix_socket_directories = '$DATA'"
        echo "max_connections = 100"
        echo "shared_buffers = 128MB"
        echo "fsync = off"                 # a throwaway test server
        echo "synchronous_commit = off"
        echo "full_page_writes = off"
    } | as_postgres tee -a "$DATA/postgresql.conf" >/dev/null
fi

if ! as_postgres "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    log "starting PostgreSQL on 127.0.0.1:$PORT"
    as_postgres "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start >&2
fi

psql_super() { as_postgres "$BIN/psql" -h "$DATA" -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
for _ in $(seq 1 30); do psql_super -c 'select 1' >/dev/null 2>&1 && break; sleep 1; done

if [ "$(psql_super -c "select 1 from pg_roles where rolname = '$ROLE'")" != 1 ]; then
    psql_super -c "create role $ROLE login password '$PASSWORD' createdb" >&2
else
    psql_super -c "alter role $ROLE login password '$PASSWORD'" >&2
fi
if [ "$(psql_super -c "select 1 from pg_database where datname = '$DB'")" != 1 ]; then
    psql_super -c "create database $DB owner $ROLE" >&2
fi

URL="postgres://$ROLE:$PASSWORD@127.0.0.1:$PORT/$DB"
echo "export GROUNDCITE_TEST_DATABASE_URL=$URL" > "$BASE/env"
chmod 644 "$BASE/env"
log "ready: $URL (also in $BASE/env)"
echo "export GROUNDCITE_TEST_DATABASE_URL=$URL"
