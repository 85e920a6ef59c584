#!/usr/bin/env bash
# Set-up (missing Debian packages), build, and every test through ctest; then
# the test suite built with clang's AddressSanitizer + UndefinedBehaviorSanitizer
# and libFuzzer's coverage (./build-asan), and each libFuzzer harness from that
# same build for 30 s (scripts/fuzz.sh). Any test failure, sanitizer report or
# fuzzer crash fails.
#   MEMCAP_SANITIZE=0   skip the sanitizer build     MEMCAP_FUZZ_SECONDS=0   skip fuzzing
#   MEMCAP_PORTABLE=ON  build ./build and ./build-asan for baseline x86-64 instead of
#                       this machine's CPU (-march=native, the default). The golden test
#                       passes in either: its policy is in tests/golden_reports.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${MEMCAP_JOBS:-$(nproc)}
MEMCAP_TEST_DEPS=1 bash "$root/scripts/setup.sh"
build=${MEMCAP_BUILD_DIR:-$root/build}
(cd "$build" && ctest --output-on-failure -j "$(nproc)")

fuzz_build=""
if [[ ${MEMCAP_SANITIZE:-1} != 0 ]]; then
    # ASan + UBSan, every report fatal (-fno-sanitize-recover=all); MPI off, so the
    # MPI and Slurm tests (which need mpirun/srun to start sanitized ranks) do not exist here.
    # clang with libFuzzer's coverage (-DMEMCAP_FUZZ=ON): the fuzz harnesses are targets of this
    # build, so one instrumented build serves the sanitized tests and the fuzzer.
    asan=${MEMCAP_ASAN_BUILD_DIR:-$root/build-asan}
    echo "test: AddressSanitizer + UndefinedBehaviorSanitizer build (clang, libFuzzer coverage) in $asan" >&2
    if [[ -f $asan/CMakeCache.txt ]] && ! grep -qs '^MEMCAP_FUZZ:BOOL=ON$' "$asan/CMakeCache.txt"; then
        # An older g++ sanitizer build (a build directory of ours): CMake cannot change a configured
        # tree's compiler, and its objects are of no use to this one.
        echo "test: $asan was built with another compiler; building it afresh" >&2
        rm -rf "$asan"
    fi
    # No benchmarks here (MEMCAP_BUILD_BENCH=OFF): their smoke tests run in the Release build
    # above, and the kernels they time are the ones the conformance tests run under ASan.
    # -O1 -g1, not RelWithDebInfo's -O2 -g: the instrumented build is most of CI's time, and line
    # tables are all a sanitizer report's stack needs. The library as one translation unit
    # (MEMCAP_LIB_UNITY_BATCH=0) on one core while the tests compile on the other: 211 s wall
    # and 410 CPU s, against 342 s and 627 CPU s in batches of 8 (Intel Xeon, 2026-12-03).
    generator=()
    [[ -f $asan/CMakeCache.txt ]] || generator=(-G Ninja)
    CXX=clang++ cmake -S "$root" -B "$asan" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
        -DMEMCAP_SANITIZE=ON -DMEMCAP_FUZZ=ON -DMEMCAP_MPI=OFF -DMEMCAP_BUILD_BENCH=OFF -DMEMCAP_LIB_UNITY_BATCH=0 \
        ${MEMCAP_PORTABLE:+-DMEMCAP_PORTABLE="$MEMCAP_PORTABLE"} >/dev/null
    cmake --build "$asan" -j "$jobs"
    fuzz_build=$asan
    # (detect_stack_use_after_return is off: it made the suite ~3x slower)
    export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:strict_string_checks=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0
    (cd "$asan" && ctest --output-on-failure -j "$(nproc)")  # what it runs: tests/CMakeLists.txt
fi

seconds=${MEMCAP_FUZZ_SECONDS:-30}
if [[ $seconds != 0 ]]; then
    MEMCAP_FUZZ_BUILD_DIR=${MEMCAP_FUZZ_BUILD_DIR:-${fuzz_build:-$root/build-fuzz}} bash "$root/scripts/fuzz.sh" "$seconds"
fi
