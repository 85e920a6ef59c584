#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz/) with clang++ into ./build-fuzz (or
# $MEMCAP_FUZZ_BUILD_DIR) and runs each for SECONDS (default 30) on 1 core (side by side
# when the machine has a core for each),
# starting from the seed corpus in tests/fuzz/corpus/. Any crash, sanitizer
# report, leak, or out-of-memory fails the script (status 1) and leaves the
# reproducer in the build directory's fuzz-artifacts/. Inputs it finds go to a
# temporary corpus that is deleted afterwards: only the seed corpus is in git.
#   usage: scripts/fuzz.sh [SECONDS]
# Reproduce a crash: build-fuzz/tests/fuzz/fuzz_spec build-fuzz/fuzz-artifacts/crash-...
# scripts/test.sh runs it on its sanitizer build (MEMCAP_FUZZ_BUILD_DIR=build-asan), which is
# configured with MEMCAP_FUZZ=ON: there the artifacts are in build-asan/fuzz-artifacts/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-30}
build=${MEMCAP_FUZZ_BUILD_DIR:-$root/build-fuzz}
command -v clang++ >/dev/null || {
    echo "fuzz: clang++ is missing; install the test dependencies with: MEMCAP_TEST_DEPS=1 scripts/setup.sh" >&2
    exit 2
}

# A build directory already configured with MEMCAP_FUZZ=ON (scripts/test.sh's sanitizer build,
# which is one: the harnesses and the sanitized test suite share its objects) is used as it is.
if ! grep -qs '^MEMCAP_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
    CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMCAP_FUZZ=ON \
        -DMEMCAP_BUILD_TESTS=OFF -DMEMCAP_MPI=OFF >/dev/null
fi
cmake --build "$build" -j "${MEMCAP_JOBS:-$(nproc)}" --target fuzz_spec fuzz_sweep_config

artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
names=(spec sweep_config)
# The harnesses run side by side when there are cores for both (each is single-threaded).
fuzz_one() {
    local name=$1
    mkdir -p "$work/$name"
    # The harnesses write only below $TMPDIR (the config harness's scratch file).
    TMPDIR="$work" "$build/tests/fuzz/fuzz_$name" "$work/$name" "$root/tests/fuzz/corpus/$name" \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -max_len=4096 -print_final_stats=1 \
        -artifact_prefix="$artifacts/$name-" >"$work/$name.log" 2>&1
}
echo "fuzz: ${names[*]/#/fuzz_} for ${seconds}s each" >&2
status=0
if (( $(nproc) >= ${#names[@]} )); then
    pids=()
    for name in "${names[@]}"; do fuzz_one "$name" & pids+=($!); done
    for i in "${!names[@]}"; do wait "${pids[$i]}" && echo 0 >"$work/${names[$i]}.rc" || echo 1 >"$work/${names[$i]}.rc"; done
else
    for name in "${names[@]}"; do fuzz_one "$name" && echo 0 >"$work/$name.rc" || echo 1 >"$work/$name.rc"; done
fi
for name in "${names[@]}"; do
    if [[ $(cat "$work/$name.rc") != 0 ]]; then
        status=1
        echo "fuzz: fuzz_$name FAILED; reproducer in $artifacts/:" >&2
        grep -E "ERROR|invariant|==[0-9]+==|SUMMARY|Test unit written" "$work/$name.log" | head -20 >&2
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$name.log")
    echo "fuzz: fuzz_$name: ${runs:-?} executions in ${seconds}s (${rate:-?}/s), corpus $(ls "$work/$name" | wc -l) inputs" >&2
done
exit $status
