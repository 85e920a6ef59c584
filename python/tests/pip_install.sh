#!/usr/bin/env bash
# `pip install ./python` as the README gives it: a fresh venv that sees Debian's numpy and
# pandas, the package built through memcap's CMake with no network (--no-index), then the
# README's Python snippet run from another directory with the venv's interpreter; its
# output must be the README's, digit for digit.
# usage: pip_install.sh PYTHON SOURCE_ROOT CMAKE_BUILD_DIR
# CMAKE_BUILD_DIR is kept between runs (MEMCAP_PIP_BUILD_DIR), so only the first run compiles.
set -euo pipefail
python=$1 root=$2 cache=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" -m venv --system-site-packages "$work/.venv"
# Built at -O1 and as one translation unit a target unless MEMCAP_CMAKE_ARGS says otherwise:
# the same sources, CMake target and packaging as a user's install (which is -O3 in batches of
# 8), compiled faster on a fresh CI machine, where this test builds on one core beside the
# others (the library and module at -O1: 186 s on one core in batches of 8, 146 s in one batch,
# 3.4 GB peak; Intel Xeon, 2026-12-03); the snippet's digits are the same (no -ffast-math, and
# -ffp-contract=off at every level).
# MEMCAP_PIP_TEST_ARGS (set by the ctest when the build compiles through ccache): the settings of
# the build running the test, so the package's compile commands are its commands and ccache
# serves every object from what that build compiled (seconds instead of minutes).
cmake_args=${MEMCAP_CMAKE_ARGS:-${MEMCAP_PIP_TEST_ARGS:-}}
[[ -n $cmake_args ]] || cmake_args="-DCMAKE_CXX_FLAGS_RELEASE='-O1 -DNDEBUG' -DMEMCAP_LIB_UNITY_BATCH=0"  # setup.py splits it with shlex
MEMCAP_CMAKE_ARGS=$cmake_args MEMCAP_PIP_BUILD_DIR=$cache "$work/.venv/bin/pip" install --no-index --quiet "$root/python"

# The snippet and the output the README promises for it.
read -r -d '' extract <<'PY' || true
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^(\.venv/bin/python -c .*)$\n```\n\n[^\n]*prints[^\n]*\n\n```\n(.*?)```", text, re.M | re.S)
if not m:
    sys.exit("README.md: no `.venv/bin/python -c` line followed by the block it prints")
open(sys.argv[2], "w").write(m.group(1) + "\n")
open(sys.argv[3], "w").write(m.group(2))
PY
"$python" -c "$extract" "$root/README.md" "$work/snippet.sh" "$work/expected.txt"

cd "$work"  # not the source tree: the installed package, not python/memcap, must be imported
env -u PYTHONPATH bash "$work/snippet.sh" >"$work/got.txt" 2>"$work/stderr"
if ! diff "$work/expected.txt" "$work/got.txt"; then
    echo "FAIL: the README's snippet printed something else (above: README, below: this run)"; exit 1
fi
where=$(env -u PYTHONPATH "$work/.venv/bin/python" -c "import memcap; print(memcap.__file__)")
[[ $where == "$work/.venv/"* ]] || { echo "FAIL: memcap imported from $where, not the venv"; exit 1; }
echo "pip_install: ok ($where)"
