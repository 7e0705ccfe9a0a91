#!/usr/bin/env bash
# The fuzz targets (fuzz/fuzz_targets: markers, sentence spans, the whole
# check, document ingest, the SSE parser), each for a bounded time, from an
# initial corpus of the labelled cases and the handbook pages in ../shared. Prints the
# executions of each; any crash fails the run (libFuzzer exits non-zero and
# leaves the input under fuzz/artifacts/).
#
#   FUZZ_SECONDS=60 .ci/fuzz.sh
#
# cargo-fuzz needs nightly-only rustc flags (sanitizer, coverage): the
# machine has one stable toolchain, so RUSTC_BOOTSTRAP=1 lets it accept
# them for this build only.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
export RUSTC_BOOTSTRAP=1

command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz@0.13.2

# The initial corpus: answers and passages of the cases, handbook pages, SSE bodies.
corpus=fuzz/corpus
mkdir -p "$corpus"/{markers,segment,check,document,sse}
python3 - "$corpus" <<'PY'
import json, os, sys, glob, hashlib
corpus = sys.argv[1]
def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(corpus, target, name), "wb") as f:
        f.write(data)
for path in ["../shared/cases/dev.jsonl", "../shared/cases/paraphrase-dev.jsonl"]:
    for line in open(path, encoding="utf-8"):
        if not line.strip():
            continue
        case = json.loads(line)
        for target in ("markers", "segment", "check"):
            put(target, case["answer"])
        for p in case["passages"][:2]:
            put("segment", p["text"])
pages = sorted(glob.glob("../shared/corpora/tts-handbook/pages/**/*.md", recursive=True))
for page in pages[::8]:
    put("document", b"\x00" + open(page, "rb").read()[:20000])
put("document", b"\x01<html><head><title>T</title></head><body><h1>A</h1><p>One [1].</p></body></html>")
put("sse", b"\x03data: {\"a\": 1}\n\nevent: x\ndata: two\ndata: lines\n\n: comment\r\ndata: end\n")
PY

cargo fuzz build -O --fuzz-dir fuzz 2>&1 | tail -1
total=0
for target in markers segment check document sse; do
  log="fuzz/artifacts/$target.log"
  mkdir -p fuzz/artifacts
  if ! cargo fuzz run --fuzz-dir fuzz "$target" "$corpus/$target" -- \
      -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: $target CRASHED (input under fuzz/artifacts/$target/)" >&2
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  echo "fuzz: $target ${runs:-?} executions in ${seconds} s, 0 crashes"
done
