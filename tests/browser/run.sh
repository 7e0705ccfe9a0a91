#!/usr/bin/env bash
# Browser test of the groundcite web page: headless Chromium drives `/`
# against a server on a loopback port, checks citation chips, evidence
# tooltips, flagged sentences, escaping of passage text, the refusal view and
# the check tab, and saves screenshots to target/browser/*.png.
#
# Installs nothing. Prerequisites (for .ci/run):
#   apt-get install -y chromium nodejs npm     # /usr/bin/chromium (Debian 12: chromium 156), node >= 18
#   (cd tests/browser && npm ci)               # playwright-core 1.65.1 only, from package-lock.json
#                                              # never `npx playwright install`: the system chromium is used
#   a Rust toolchain (cargo) to build the demo server
#
# Environment:
#   CARGO_TARGET_DIR   where cargo builds (default: <repo>/target)
#   SERVER_BIN         a prebuilt demo_server binary (skips the build)
#   SCREENSHOT_DIR     default <repo>/target/browser
#   CHROMIUM           default /usr/bin/chromium
#
# The server is `crates/server/examples/demo_server.rs`: `app()` with the
# static demo answerer (a passage holding <script>window.__xss=1</script>, an
# answer with contradicted, unsupported and uncited sentences), 150 ms between
# streamed sentences, audit log in a temporary directory.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/tests/browser"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
export SCREENSHOT_DIR=${SCREENSHOT_DIR:-$ROOT/target/browser}
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

[ -x "$CHROMIUM" ] || { echo "browser test: $CHROMIUM not found (apt-get install -y chromium)" >&2; exit 2; }
command -v node >/dev/null || { echo "browser test: node not found (apt-get install -y nodejs npm)" >&2; exit 2; }
[ -d "$HERE/node_modules/playwright-core" ] || { echo "browser test: run (cd tests/browser && npm ci) first" >&2; exit 2; }

if [ -z "${SERVER_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --quiet -p groundcite-server --example demo_server)
  SERVER_BIN="$TARGET/debug/examples/demo_server"
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
WORK=$(mktemp -d)
LOG="$WORK/server.log"
"$SERVER_BIN" --addr "127.0.0.1:$PORT" --audit "$WORK/audit.sqlite" --delay-ms 150 >"$LOG" 2>&1 &
SERVER_PID=$!
cleanup() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then echo "browser test: server exited" >&2; cat "$LOG" >&2; exit 1; fi
  sleep 0.1
done

cd "$HERE"
if ! BASE_URL="http://127.0.0.1:$PORT" node answer.test.mjs; then
  echo "--- server log" >&2
  tail -50 "$LOG" >&2
  exit 1
fi
