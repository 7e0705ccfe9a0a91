#!/usr/bin/env bash
# Load benchmark of POST /v1/check: a release build of the server on
# loopback, the audit log ON (every check report is written to SQLite by the
# background writer), wrk POSTing one dev case at 64 connections.
#
#   bench/load-check.sh [CASE_ID] [DURATION]       # default d03, 15s
#
# Prerequisites: apt-get install -y wrk; python3; cargo.
# Environment: CONNECTIONS (64), THREADS (2), CASES (../shared/cases/dev.jsonl),
#   AUDIT (on|off, default on), SERVER_BIN (prebuilt demo_server, skips the build),
#   CARGO_TARGET_DIR.
# Prints requests/s, p50/p99 latency, non-2xx responses, audit records written
# and lost (from /metrics), and the target (>= 5000 req/s, p99 < 20 ms).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CASE=${1:-d03}
DURATION=${2:-15s}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
CASES=${CASES:-$ROOT/../shared/cases/dev.jsonl}
AUDIT=${AUDIT:-on}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}

command -v wrk >/dev/null || { echo "load-check: wrk not found (apt-get install -y wrk)" >&2; exit 2; }

if [ -z "${SERVER_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --quiet --release -p groundcite-bench --bin demo_server)
  SERVER_BIN="$TARGET/release/demo_server"
fi

WORK=$(mktemp -d)
python3 - "$CASES" "$CASE" "$WORK/body.json" <<'PY'
import json, sys
cases, wanted, out = sys.argv[1:]
for line in open(cases):
    if not line.strip():
        continue
    case = json.loads(line)
    if case["id"] == wanted:
        body = {"question": case.get("question"), "passages": case["passages"], "answer": case["answer"]}
        json.dump(body, open(out, "w"))
        break
else:
    sys.exit(f"no case {wanted} in {cases}")
PY

cat >"$WORK/post.lua" <<'LUA'
local f = assert(io.open(os.getenv("BODY_FILE"), "r"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"

function done(summary, latency, requests)
  local secs = summary.duration / 1e6
  io.write(string.format("RESULT requests=%d errors=%d non2xx=%d rps=%.0f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
    summary.requests,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status,
    summary.requests / secs,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000))
end
LUA

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
if [ "$AUDIT" = on ]; then AUDIT_ARG="$WORK/audit.sqlite"; else AUDIT_ARG=off; fi
RUST_LOG=warn "$SERVER_BIN" --addr "127.0.0.1:$PORT" --audit "$AUDIT_ARG" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
cleanup() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done

URL="http://127.0.0.1:$PORT/v1/check"
# The body must check cleanly before we measure it.
curl -fsS -H 'content-type: application/json' --data-binary @"$WORK/body.json" "$URL" >/dev/null
echo "case $CASE: $(wc -c <"$WORK/body.json") bytes; audit $AUDIT; $CONNECTIONS connections, $THREADS wrk threads, $DURATION; $(nproc) cores"
# Warm-up, then the measured run.
BODY_FILE="$WORK/body.json" wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s "$WORK/post.lua" "$URL" >/dev/null
BODY_FILE="$WORK/body.json" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$WORK/post.lua" "$URL" | tee "$WORK/wrk.txt"

sleep 1
METRICS=$(curl -fsS "http://127.0.0.1:$PORT/metrics")
written=$(echo "$METRICS" | awk '/^groundcite_audit_records_total /{print $2}')
lost=$(echo "$METRICS" | awk '/^groundcite_audit_write_failures_total/{s+=$2} END{print s+0}')
rows=0
if [ "$AUDIT" = on ]; then rows=$(sqlite3 "$WORK/audit.sqlite" 'select count(*) from audit' 2>/dev/null || echo "?"); fi
line=$(grep '^RESULT' "$WORK/wrk.txt")
echo
echo "$line audit_written=${written:-0} audit_lost=$lost audit_rows=$rows"
python3 - "$line" <<'PY'
import sys
kv = dict(p.split("=") for p in sys.argv[1].split()[1:])
rps, p99 = float(kv["rps"]), float(kv["p99_ms"])
ok = rps >= 5000 and p99 < 20 and int(kv["non2xx"]) == 0 and int(kv["errors"]) == 0
print(f"target >= 5000 req/s and p99 < 20 ms: {'MET' if ok else 'NOT MET'} ({rps:.0f} req/s, p99 {p99:.2f} ms)")
PY
