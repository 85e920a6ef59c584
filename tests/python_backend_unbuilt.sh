#!/usr/bin/env bash
# `memcap run --python-backend` when the Python module's compiled half is absent (only the
# `memcap` target built: build/python/memcap/ then holds the .py files CMake copied and no
# _memcap extension). It must refuse with one line that names what to build or set (exit 2,
# no output file), not fail inside Python with a circular-import traceback; `import memcap`
# from such a directory must say the same; docs/python.md must document MEMCAP_PYTHONPATH.
# The layout is made in a temporary directory, so the test runs whether or not the module is built.
# usage: python_backend_unbuilt.sh path/to/memcap SOURCE_DIR
set -u
memcap=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A build tree without the module: the binary, and python/memcap/ with the .py files only.
mkdir -p "$work/build/python/memcap"
cp "$memcap" "$work/build/memcap"
cp "$src/python/memcap/__init__.py" "$src/python/memcap/__main__.py" "$work/build/python/memcap/"
backend=("$src/examples/python_backend/linear_numpy.py:lin_np" -m lin_np -t assoc_recall --n 4 --seeds 1 --quiet)

# expect_refusal "what" env... -- memcap...
expect_refusal() {
    local what=$1; shift
    rm -f "$work/out.csv"
    env "$@" --out "$work/out.csv" >"$work/stdout" 2>"$work/stderr"
    local status=$? lines; lines=$(wc -l <"$work/stderr")
    if [[ $status -ne 2 ]]; then fail "$what: exit $status, expected 2: $(tail -n 1 "$work/stderr")"; return; fi
    if [[ $lines -ne 1 ]]; then fail "$what: $lines lines on stderr"; cat "$work/stderr"; return; fi
    for needle in "$work/build/python/memcap" "is not built" "memcap_python" "MEMCAP_PYTHONPATH" "MEMCAP_PYTHON"; do
        grep -qF -- "$needle" "$work/stderr" || { fail "$what: stderr lacks '$needle': $(cat "$work/stderr")"; return; }
    done
    if [[ -e $work/out.csv ]]; then fail "$what: left an output file"; return; fi
    echo "ok   ($what) -> $(cat "$work/stderr")"
}

# found beside the binary (MEMCAP_PYTHONPATH unset), and named by MEMCAP_PYTHONPATH (alone or after another directory)
expect_refusal "the build tree's python/" -u MEMCAP_PYTHONPATH "$work/build/memcap" run --python-backend "${backend[@]}"
expect_refusal "MEMCAP_PYTHONPATH" MEMCAP_PYTHONPATH="$work/build/python" "$memcap" run --python-backend "${backend[@]}"
expect_refusal "MEMCAP_PYTHONPATH, second entry" MEMCAP_PYTHONPATH="$work/nothing:$work/build/python" \
    "$memcap" run --python-backend "${backend[@]}"
expect_refusal "--python-backend=FILE" -u MEMCAP_PYTHONPATH "$work/build/memcap" run --python-backend="${backend[0]}" \
    "${backend[@]:1}"

# `import memcap` from that directory: an ImportError that says what to build, not a circular import
# (needs the interpreter the module is built for, with numpy and pandas; skipped without them).
if /usr/bin/python3 -c "import numpy, pandas" 2>/dev/null; then
    PYTHONPATH="$work/build/python" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c "import memcap" 2>"$work/stderr"
    status=$?
    last=$(tail -n 1 "$work/stderr")
    if [[ $status -eq 0 ]]; then fail "import memcap without _memcap succeeded"
    elif [[ $last != ImportError:*memcap_python* || $last == *"circular import"* ]]; then fail "import memcap: $last"
    else echo "ok   (import memcap) -> $last"; fi
else
    echo "skip (import memcap): /usr/bin/python3 has no numpy and pandas"
fi

# docs/python.md documents the variables the message names
for var in MEMCAP_PYTHONPATH MEMCAP_PYTHON; do
    grep -q "\`$var\`" "$src/docs/python.md" || fail "docs/python.md does not document \`$var\`"
done

if [[ $failures -ne 0 ]]; then echo "$failures case(s) failed"; exit 1; fi
echo "all cases passed"
