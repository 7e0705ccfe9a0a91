#!/usr/bin/env bash
# Runs the Python examples against the loopback fake OpenAI server
# (python/tests/fake_openai.py): each example once for an answerable
# question (must end grounded) and once for an off-topic one (must end as a
# refusal). No network at run time.
#
#   GROUNDCITE_WHEEL=path/to/groundcite-*.whl bash python/examples/run.sh [VENV]
#
# VENV: $1, else $EXAMPLES_VENV, else target/py-examples-venv under the repo
# root; created when missing, reused otherwise. Without GROUNDCITE_WHEEL the
# newest target/wheels/groundcite-*.whl is used, else the groundcite already
# installed in VENV.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="${1:-${EXAMPLES_VENV:-$REPO/target/py-examples-venv}}"
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
PY="$VENV/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1
# The fake server is on loopback: never route it through a proxy.
export NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}"
export no_proxy="$NO_PROXY"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t=$(now)
if [ ! -x "$PY" ]; then
    "${PYTHON:-python3}" -m venv "$VENV"
    echo "venv: created $VENV in $(since "$t") s"
else
    echo "venv: reusing $VENV"
fi

wheel="${GROUNDCITE_WHEEL:-}"
if [ -z "$wheel" ]; then
    wheel="$(ls -t "$REPO"/target/wheels/groundcite-*.whl 2>/dev/null | head -n 1 || true)"
fi
t=$(now)
if [ -n "$wheel" ]; then
    # --force-reinstall: a development wheel keeps its version number.
    "$PY" -m pip install --quiet --force-reinstall --no-deps "$wheel"
    echo "install: groundcite from $(basename "$wheel") in $(since "$t") s"
elif "$PY" -c "import groundcite" 2>/dev/null; then
    echo "install: no GROUNDCITE_WHEEL, using the groundcite installed in $VENV"
else
    echo "run.sh: set GROUNDCITE_WHEEL to a groundcite wheel (maturin build writes target/wheels/)" >&2
    exit 2
fi
t=$(now)
"$PY" -m pip install --quiet -r "$HERE/requirements.txt"
echo "install: requirements.txt in $(since "$t") s"

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

"$PY" "$REPO/python/tests/fake_openai.py" 0 >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
BASE_URL=""
for _ in $(seq 100); do
    BASE_URL="$(head -n 1 "$WORK/server.out" 2>/dev/null || true)"
    [ -n "$BASE_URL" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.err" >&2; echo "run.sh: the fake server died" >&2; exit 1; }
    sleep 0.1
done
[ -n "$BASE_URL" ] || { echo "run.sh: the fake server printed no URL" >&2; exit 1; }
echo "server: $BASE_URL (pid $SERVER_PID)"

cd "$WORK"  # the examples write nothing in the caller's directory
passed=0
failed=0
run() {  # run EXAMPLE EXPECTED QUESTION
    local example="$1" expected="$2" question="$3" out rc result t
    t=$(now)
    rc=0
    out="$(OPENAI_API_KEY=unused timeout 300 "$PY" "$HERE/$example" \
        --base-url "$BASE_URL" --model fake --index "$WORK/index" "$question" 2>&1)" || rc=$?
    result="$(printf '%s\n' "$out" | sed -n 's/^result: //p' | tail -n 1)"
    if [ "$rc" -eq 0 ] && [ "$result" = "$expected" ]; then
        passed=$((passed + 1))
        echo "ok    $example: $expected, exit 0 ($(since "$t") s): $question"
    else
        failed=$((failed + 1))
        echo "FAIL  $example: expected $expected with exit 0, got ${result:-no result} with exit $rc: $question"
        printf '%s\n' "$out" | sed 's/^/      | /'
    fi
}

for example in openai_loop.py llamaindex_query.py langchain_retriever.py; do
    run "$example" grounded "How long does reimbursement take?"
    run "$example" refusal "What is the Wi-Fi password in the San Francisco office?"
done

echo "examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
