#!/usr/bin/env bash
# Runs the micro-benchmarks (bench/bench_memories.cpp) and writes
#   reports/bench/bench.json   Google Benchmark's JSON (context holds the ceilings)
#   reports/bench/bench.md     a readable table: medians over repetitions
# Builds first if needed (scripts/setup.sh, into $MEMCAP_BUILD_DIR or build/).
# usage: scripts/bench.sh [out-dir] [extra benchmark flags...]
#   e.g. scripts/bench.sh reports/bench --benchmark_filter='^(softmax|hrr)/'
# Environment: MEMCAP_BENCH_REPS (default 3), MEMCAP_BENCH_MIN_TIME (seconds, default 0.2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MEMCAP_BUILD_DIR:-$root/build}
out=${1:-$root/reports/bench}
shift || true
bench=$build/bench/memcap_bench
[[ -x $bench ]] || MEMCAP_BUILD_DIR=$build bash "$root/scripts/setup.sh"
cmake --build "$build" -j "${MEMCAP_JOBS:-$(nproc)}" --target memcap_bench >/dev/null
mkdir -p "$out"
"$bench" --benchmark_repetitions="${MEMCAP_BENCH_REPS:-3}" --benchmark_report_aggregates_only=true \
    --benchmark_min_time="${MEMCAP_BENCH_MIN_TIME:-0.2}" \
    --benchmark_out="$out/bench.json" --benchmark_out_format=json "$@" >&2
/usr/bin/python3 "$root/scripts/bench_table.py" "$out/bench.json" | tee "$out/bench.md"
