#!/usr/bin/env bash
# Set-up (missing Debian packages), build, and every test through ctest; then
# the same test suite built with AddressSanitizer + UndefinedBehaviorSanitizer
# (./build-asan), then each libFuzzer harness for 30 s (scripts/fuzz.sh,
# ./build-fuzz). Any test failure, sanitizer report or fuzzer crash fails.
#   MEMCAP_SANITIZE=0   skip the sanitizer build     MEMCAP_FUZZ_SECONDS=0   skip fuzzing
#   MEMCAP_PORTABLE=ON  build ./build and ./build-asan for baseline x86-64 instead of
#                       this machine's CPU (-march=native, the default; the fuzz build is
#                       always native). The golden test passes in either: its policy is
#                       in tests/golden_reports.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${MEMCAP_JOBS:-$(nproc)}
MEMCAP_TEST_DEPS=1 bash "$root/scripts/setup.sh"
build=${MEMCAP_BUILD_DIR:-$root/build}
(cd "$build" && ctest --output-on-failure -j "$(nproc)")

if [[ ${MEMCAP_SANITIZE:-1} != 0 ]]; then
    # ASan + UBSan, every report fatal (-fno-sanitize-recover=all); MPI off, so the
    # MPI and Slurm tests (which need mpirun/srun to start sanitized ranks) do not exist here.
    asan=${MEMCAP_ASAN_BUILD_DIR:-$root/build-asan}
    echo "test: AddressSanitizer + UndefinedBehaviorSanitizer build in $asan" >&2
    # No benchmarks here (MEMCAP_BUILD_BENCH=OFF): their smoke tests run in the Release build
    # above, and the kernels they time are the ones the conformance tests run under ASan.
    # -O1 -g1, not RelWithDebInfo's -O2 -g: the instrumented build is most of CI's time, and line
    # tables are all a sanitizer report's stack needs.
    cmake -S "$root" -B "$asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
        -DMEMCAP_SANITIZE=ON -DMEMCAP_MPI=OFF -DMEMCAP_BUILD_BENCH=OFF \
        ${MEMCAP_PORTABLE:+-DMEMCAP_PORTABLE="$MEMCAP_PORTABLE"} >/dev/null
    cmake --build "$asan" -j "$jobs"
    # (detect_stack_use_after_return is off: it made the suite ~3x slower)
    export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:strict_string_checks=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0
    # Left out here, run in the Release build above: two tests whose code paths the
    # rest of the suite already covers under ASan, but that take minutes with it —
    # the d = 4096, n = 65536 cell (~90 s, 3 GB) and the rotation RNN's chance-level
    # test (10 seeds x 2000-episode probes, ~300 s).
    slow='d = 4096 and n = 65536|rotation RNN has no content-addressed read'
    (cd "$asan" && ctest --output-on-failure -j "$(nproc)" -E "$slow")
fi

seconds=${MEMCAP_FUZZ_SECONDS:-30}
if [[ $seconds != 0 ]]; then
    bash "$root/scripts/fuzz.sh" "$seconds"
fi
