#!/usr/bin/env bash
# A bounded soak of one server on loopback: 64 clients, valid, invalid and
# near-limit requests, 30 s; checks 0 internal errors, memory within 20%
# after warm-up, exactly one audit record per answer served, and prints
# p50/p99. See bench/soak.py. Run by .ci/run.
#
# Usage: bench/soak.sh                (debug build: what CI has built anyway)
#        PROFILE=release DURATION=60 bench/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-debug}
if [ "$profile" = release ]; then
  cargo build -q --release -p groundcite
else
  cargo build -q -p groundcite
fi
target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
export GROUNDCITE_BIN="$target_dir/$profile/groundcite"
exec python3 bench/soak.py
