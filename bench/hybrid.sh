#!/usr/bin/env bash
# Hybrid retrieval with all-MiniLM-L6-v2, release build, the whole TTS
# handbook (../shared/corpora/tts-handbook/pages):
#   1. ingest with vectors into a fresh index: wall time, peak RSS (≤ 90 s);
#   2. the same ingest again, every file unchanged (≤ 1 s);
#   3. `ask` with the extractive generator: p50 / p90 of `timings.total_ms`
#      over the paraphrased and the phrased dev questions (≤ 50 ms p50),
#      from `groundcite eval questions --json` (the index and model loaded
#      once; each ask embeds its question);
#   4. `serve` with the model: resident memory after answering every dev
#      question over HTTP (VmRSS and VmHWM, ≤ 400 MB);
#   5. embedding one question (≤ 15 ms): criterion,
#      `cargo bench -p groundcite-embed --bench embed -- question`
#      (run with BENCH_EMBED=1; it builds the bench profile too).
#
# Usage: bench/hybrid.sh        (GROUNDCITE_MODEL_DIR, else fetched)
set -euo pipefail
cd "$(dirname "$0")/.."
model="${GROUNDCITE_MODEL_DIR:-$(scripts/fetch-model.sh)}"
export GROUNDCITE_MODEL_DIR="$model"
cargo build --release -q -p groundcite
target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
bin="$target_dir/release/groundcite"
dir=$(mktemp -d)
. bench/serve.sh
cleanup() {
  stop_serve
  rm -rf "$dir"
}
trap cleanup EXIT
pages=../shared/corpora/tts-handbook/pages
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for run in fresh unchanged; do
  /usr/bin/time -f "$run ingest with vectors: %e s wall, %M KB peak RSS" \
    "$bin" --index "$dir/index" ingest "$pages" --handbook | tail -2
done

for file in questions-paraphrase-dev questions-dev; do
  "$bin" --index "$dir/index" eval questions "../shared/cases/$file.jsonl" --json > "$dir/$file.json"
done
python3 - "$dir"/questions-paraphrase-dev.json "$dir"/questions-dev.json <<'EOF'
import json, statistics, sys
ms = []
for path in sys.argv[1:]:
    s = json.load(open(path))
    assert s["retrieval"] == "hybrid", s["retrieval"]
    ms += [o["total_ms"] for o in s["outcomes"]]
ms.sort()
p = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]
print(f"ask (extractive, hybrid): {len(ms)} questions, p50 {statistics.median(ms):.1f} ms, p90 {p(0.9):.1f} ms, max {ms[-1]:.1f} ms")
EOF

start_serve "$bin" "$dir/serve.log" --index "$dir/index"
python3 - "$port" ../shared/cases/questions-paraphrase-dev.jsonl ../shared/cases/questions-dev.jsonl <<'EOF'
import json, sys, urllib.request
port = sys.argv[1]
n = 0
for path in sys.argv[2:]:
    for line in open(path):
        if not line.strip():
            continue
        q = json.loads(line)["question"]
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/ask", data=json.dumps({"question": q}).encode(),
                                     headers={"content-type": "application/json"})
        body = json.load(urllib.request.urlopen(req))
        assert body["retrieval"] == "hybrid", body["retrieval"]
        n += 1
print(f"serve: {n} questions answered over HTTP")
EOF
grep -E "VmRSS|VmHWM" "/proc/$server_pid/status" | awk '{printf "serve with the model: %s %.0f MB\n", $1, $2 / 1024}'

if [ "${BENCH_EMBED:-0}" = 1 ]; then
  cargo bench -q -p groundcite-embed --bench embed -- question
fi
