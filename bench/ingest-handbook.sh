#!/usr/bin/env bash
# Ingest of the whole TTS handbook (../shared/corpora/tts-handbook/pages) in
# release mode into a fresh index: wall time and peak memory, then the same
# run again (incremental: every file unchanged), then search and ask
# latency over the dev questions with the index open (criterion).
#
# Usage: bench/ingest-handbook.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p groundcite
bin=target/release/groundcite
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pages=../shared/corpora/tts-handbook/pages
for run in fresh incremental; do
  /usr/bin/time -f "$run ingest: %e s wall, %M KB peak RSS" "$bin" --index "$dir" ingest "$pages" --handbook
done
echo "search and ask latency: cargo bench -p groundcite-index --bench search; cargo bench -p groundcite-engine --bench engine -- ask"
