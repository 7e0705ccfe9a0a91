#!/usr/bin/env bash
# Browser test of the groundcite web page: headless Chromium drives `/`
# against servers on loopback ports and saves screenshots to
# target/browser/*.png. Two phases:
#
# 1. answer.test.mjs against `demo_server` (crates/server/examples), `app()`
#    with the static demo answerer: a passage holding
#    <script>window.__xss=1</script>, an answer with contradicted,
#    unsupported and uncited sentences, 150 ms between streamed sentences,
#    audit log in a temporary directory. Checks citation chips, evidence
#    tooltips, flagged sentences, escaping of passage text, the refusal view
#    and the check tab.
# 2. corpus.test.mjs against the real binary, `groundcite serve`:
#    - the demo corpus (demo/handbook/*.md) plus one page written here
#      (badges.md) whose passage text holds a literal
#      <script>window.__xss=1</script>, ingested into a temporary index;
#      `--generator scripted` replays an answer (written below, its [n] taken
#      from a probe `groundcite ask --json` so it follows the retrieval
#      order) with two supported sentences (one citing the injected
#      passage), one contradicted ($50 vs $15) and one unsupported sentence;
#      the page must show the chips, the quotes on focus, the flagged
#      sentences, and the <script> as text without running it;
#    - a smoke test of `groundcite serve --generator extractive` started
#      without --index in an empty directory, so the embedded demo corpus is
#      ingested on first use: one real question gets a chip and a quote.
#
# Installs nothing. Prerequisites (for .ci/run):
#   apt-get install -y chromium nodejs npm     # /usr/bin/chromium (Debian 12: chromium 156), node >= 18
#   (cd tests/browser && npm ci)               # playwright-core 1.65.1 only, from package-lock.json
#                                              # never `npx playwright install`: the system chromium is used
#   a Rust toolchain (cargo) to build the servers, python3 (free ports, the script file)
#
# Environment:
#   CARGO_TARGET_DIR   where cargo builds (default: <repo>/target)
#   SERVER_BIN         a prebuilt demo_server binary (skips its build)
#   GROUNDCITE_BIN     a prebuilt groundcite binary (skips its build)
#   SCREENSHOT_DIR     default <repo>/target/browser
#   CHROMIUM           default /usr/bin/chromium
# Every other GROUNDCITE_* variable is unset: the servers run on defaults
# (no API key, no config file, audit logs in the temporary directory).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/tests/browser"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
export SCREENSHOT_DIR=${SCREENSHOT_DIR:-$ROOT/target/browser}
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
while IFS= read -r var; do
  [ "$var" = GROUNDCITE_BIN ] || unset "$var"
done < <(compgen -e | grep '^GROUNDCITE_' || true)

[ -x "$CHROMIUM" ] || { echo "browser test: $CHROMIUM not found (apt-get install -y chromium)" >&2; exit 2; }
command -v node >/dev/null || { echo "browser test: node not found (apt-get install -y nodejs npm)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "browser test: python3 not found" >&2; exit 2; }
[ -d "$HERE/node_modules/playwright-core" ] || { echo "browser test: run (cd tests/browser && npm ci) first" >&2; exit 2; }

if [ -z "${SERVER_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --quiet -p groundcite-bench --bin demo_server)
  SERVER_BIN="$TARGET/debug/demo_server"
fi
if [ -z "${GROUNDCITE_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --quiet -p groundcite)
  GROUNDCITE_BIN="$TARGET/debug/groundcite"
fi
GC=$GROUNDCITE_BIN

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_up URL PID LOG: until URL answers 200 (at most 30 s), or fail with the log.
wait_up() {
  local url=$1 pid=$2 log=$3
  for _ in $(seq 1 300); do
    if curl -fsS --max-time 2 "$url" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then echo "browser test: server for $url exited" >&2; cat "$log" >&2; exit 1; fi
    sleep 0.1
  done
  echo "browser test: $url not up after 30 s" >&2
  cat "$log" >&2
  exit 1
}

failed=0

# ---- Phase 1: the static demo answerer.
PORT=$(free_port)
LOG1="$WORK/demo_server.log"
"$SERVER_BIN" --addr "127.0.0.1:$PORT" --audit "$WORK/audit.sqlite" --delay-ms 150 >"$LOG1" 2>&1 &
PIDS+=($!)
wait_up "http://127.0.0.1:$PORT/healthz" "${PIDS[-1]}" "$LOG1"
echo "== phase 1: demo_server (static answerer)"
if ! (cd "$HERE" && BASE_URL="http://127.0.0.1:$PORT" node answer.test.mjs); then
  echo "--- demo_server log" >&2
  tail -50 "$LOG1" >&2
  failed=1
fi

# ---- Phase 2: `groundcite serve` over the demo corpus.
QUESTION="When do I get my office badge, and what should I do in my first week?"
DOCS="$WORK/docs"
mkdir -p "$DOCS" "$WORK/scripted" "$WORK/fresh"
cp "$ROOT"/demo/handbook/*.md "$DOCS/"
# The code span keeps the tag as passage text (raw inline HTML would be
# stripped by the Markdown cleaner): the page must show it, not run it.
cat >"$DOCS/badges.md" <<'MD'
---
title: Badges
permalink: https://handbook.example.com/badges/
owner: Facilities
---

Office badges open the doors of every Northwind Labs office.

## Getting a badge

Badges are issued at the front desk `<script>window.__xss=1</script>` within 2 days of your start date. Bring a photo ID.

## Lost badges

Report a lost badge to the front desk. A replacement badge costs $15.
MD
INDEX="$WORK/index"
"$GC" --index "$INDEX" ingest "$DOCS" >"$WORK/ingest.log" 2>&1 || { cat "$WORK/ingest.log" >&2; exit 1; }

# Passages are numbered by retrieval rank: ask once with a placeholder
# answer, then cite each passage by the number it got.
echo '["placeholder [1]."]' >"$WORK/probe.json"
# The scripted phase checks how the page renders a given answer, so it runs
# lexical-only: with an embedding model the answerability gate may refuse
# this two-part question before the script is replayed.
(cd "$WORK/scripted" && env GROUNDCITE_MODEL_DIR=off "$GC" --index "$INDEX" ask --generator scripted --script "$WORK/probe.json" --json "$QUESTION") >"$WORK/probe.out"
python3 - "$WORK/probe.out" "$WORK/script.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
want = {
    "week": ("onboarding.md#", "Your first week"),
    "getting": ("badges.md#", "Getting a badge"),
    "lost": ("badges.md#", "Lost badges"),
    "badges": ("badges.md#", "Badges"),
}
n = {}
for key, (prefix, section) in want.items():
    hits = [p["n"] for p in report.get("passages") or [] if p["id"].startswith(prefix) and p["section"] == section]
    if not hits:
        sys.exit(f"browser test: the question no longer retrieves {prefix} {section!r}: {[(p['n'], p['id'], p['section']) for p in report.get('passages') or []]}")
    n[key] = hits[0]
answer = (
    f"Complete the security training within your first 5 working days [{n['week']}]. "
    f"Badges are issued at the front desk within 2 days of your start date [{n['getting']}]. "
    f"A replacement badge costs $50 [{n['lost']}]. "
    f"Badges also open the car park gates [{n['badges']}]."
)
json.dump([answer], open(sys.argv[2], "w"))
print(f"scripted answer: {answer}")
PY

PORT2=$(free_port)
LOG2="$WORK/serve-scripted.log"
(cd "$WORK/scripted" && exec env GROUNDCITE_MODEL_DIR=off "$GC" --index "$INDEX" serve --addr "127.0.0.1:$PORT2" --generator scripted --script "$WORK/script.json") >"$LOG2" 2>&1 &
PIDS+=($!)
PID2=${PIDS[-1]}
# No --index, in an empty directory: the embedded demo corpus on first use.
PORT3=$(free_port)
LOG3="$WORK/serve-extractive.log"
(cd "$WORK/fresh" && exec "$GC" serve --addr "127.0.0.1:$PORT3" --generator extractive) >"$LOG3" 2>&1 &
PIDS+=($!)
PID3=${PIDS[-1]}
wait_up "http://127.0.0.1:$PORT2/readyz" "$PID2" "$LOG2"
wait_up "http://127.0.0.1:$PORT3/readyz" "$PID3" "$LOG3"

echo "== phase 2: groundcite serve (demo corpus; scripted and extractive generators)"
if ! (cd "$HERE" && BASE_URL="http://127.0.0.1:$PORT2" EXTRACTIVE_URL="http://127.0.0.1:$PORT3" QUESTION="$QUESTION" node corpus.test.mjs); then
  echo "--- groundcite serve --generator scripted log" >&2
  tail -50 "$LOG2" >&2
  echo "--- groundcite serve --generator extractive log" >&2
  tail -50 "$LOG3" >&2
  failed=1
fi

exit "$failed"
