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
. bench/build.sh
exec python3 bench/soak.py
