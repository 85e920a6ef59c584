#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz/) with clang++ into ./build-fuzz (or
# $MEMCAP_FUZZ_BUILD_DIR) and runs each for SECONDS (default 30) on 1 core,
# starting from the seed corpus in tests/fuzz/corpus/. Any crash, sanitizer
# report, leak, or out-of-memory fails the script (status 1) and leaves the
# reproducer in the build directory's fuzz-artifacts/. Inputs it finds go to a
# temporary corpus that is deleted afterwards: only the seed corpus is in git.
#   usage: scripts/fuzz.sh [SECONDS]
# Reproduce a crash: build-fuzz/tests/fuzz/fuzz_spec build-fuzz/fuzz-artifacts/crash-...
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-30}
build=${MEMCAP_FUZZ_BUILD_DIR:-$root/build-fuzz}
command -v clang++ >/dev/null || {
    echo "fuzz: clang++ is missing; install the test dependencies with: MEMCAP_TEST_DEPS=1 scripts/setup.sh" >&2
    exit 2
}

CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMCAP_FUZZ=ON \
    -DMEMCAP_BUILD_TESTS=OFF -DMEMCAP_MPI=OFF >/dev/null
cmake --build "$build" -j "${MEMCAP_JOBS:-$(nproc)}" --target fuzz_spec fuzz_sweep_config

artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for name in spec sweep_config; do
    mkdir -p "$work/$name"
    # The harnesses write only below $TMPDIR (the config harness's scratch file).
    echo "fuzz: fuzz_$name for ${seconds}s" >&2
    if ! TMPDIR="$work" "$build/tests/fuzz/fuzz_$name" "$work/$name" "$root/tests/fuzz/corpus/$name" \
            -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -max_len=4096 -print_final_stats=1 \
            -artifact_prefix="$artifacts/$name-" >"$work/$name.log" 2>&1; then
        status=1
        echo "fuzz: fuzz_$name FAILED; reproducer in $artifacts/:" >&2
        grep -E "ERROR|invariant|==[0-9]+==|SUMMARY|Test unit written" "$work/$name.log" | head -20 >&2
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$name.log")
    echo "fuzz: fuzz_$name: ${runs:-?} executions in ${seconds}s (${rate:-?}/s), corpus $(ls "$work/$name" | wc -l) inputs" >&2
done
exit $status
