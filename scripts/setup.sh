#!/usr/bin/env bash
# Installs memcap's Debian 12 dependencies that are missing, then configures
# and builds into ./build (or $MEMCAP_BUILD_DIR), with MPI sweeps on
# (MEMCAP_MPI=OFF in the environment builds without), for this machine's CPU
# (-march=native; MEMCAP_PORTABLE=ON in the environment builds for baseline
# x86-64 instead: see docs/reproducibility.md). Run by quickstart.sh
# and test.sh; safe to run again (skips apt-get when everything is present).
# MEMCAP_BUILD_TARGETS="memcap" builds only the listed targets (quickstart.sh:
# the main job needs the memcap binary only, not the tests and benchmarks).
# MEMCAP_TEST_DEPS=1 (set by test.sh) adds what only the tests use: Slurm and
# munge for the local-cluster test, clang and its runtimes for the fuzzers, chromium for
# the HTML report's browser test, ccache for the pip test (a build through the cache).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

packages=(
    g++ cmake make ninja-build pkg-config  # toolchain (Ninja schedules a build's 2 cores better than make)
    libeigen3-dev                        # Eigen 3.4: matrix kernels
    libboost-dev libboost-program-options-dev  # Boost.Random / Math headers, command line
    libbenchmark-dev                     # Google Benchmark: bench/
    catch2                               # Catch2 v2: tests/
    librandom123-dev                     # Philox counter-based RNG: portable per-cell streams
    nlohmann-json3-dev                   # JSON manifests
    libfftw3-dev                         # FFTs for the holographic memory
    libjemalloc-dev                      # the memcap binary's allocator (harness/cli/allocator.hpp)
    python3-numpy python3-matplotlib     # figures (scripts/report.py) with /usr/bin/python3
    pybind11-dev python3-dev python3-pandas  # the Python module memcap (python/), for /usr/bin/python3
    python3-venv python3-pip python3-setuptools python3-wheel  # pip install ./python into a venv, offline
    libopenmpi-dev openmpi-bin           # MPI sweeps (-DMEMCAP_MPI=ON, tests/sweep_mpi.sh)
)
# Only the test suite needs these (scripts/test.sh sets MEMCAP_TEST_DEPS=1):
if [[ ${MEMCAP_TEST_DEPS:-0} == 1 ]]; then
    packages+=(
        slurm-wlm munge                      # scripts/slurm/local-cluster-test.sh: a one-node Slurm cluster
        clang libclang-rt-14-dev libomp-dev  # scripts/fuzz.sh: libFuzzer + sanitizers, OpenMP for clang
        chromium                             # tests/report_browser.sh: the HTML report in a headless browser
        ccache                               # python_pip_install: the package's build reuses the Release build's objects
        python3-torch                        # python/tests/test_fla_op.py: fla's naive delta rule, a torch op (CPU)
    )
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

build=${MEMCAP_BUILD_DIR:-$root/build}
# MEMCAP_PORTABLE is passed only when set, so a build directory keeps the ISA it was configured with.
# A new build directory uses Ninja; one configured earlier keeps its generator (CMake refuses a change).
generator=()
[[ -f $build/CMakeCache.txt ]] || generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DMEMCAP_MPI="${MEMCAP_MPI:-ON}" \
    ${MEMCAP_PORTABLE:+-DMEMCAP_PORTABLE="$MEMCAP_PORTABLE"} ${MEMCAP_CMAKE_ARGS:-} >/dev/null
# MEMCAP_BUILD_TARGETS (e.g. "memcap", set by quickstart.sh) builds only those targets.
targets=()
for t in ${MEMCAP_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "${MEMCAP_JOBS:-$(nproc)}" "${targets[@]}"
