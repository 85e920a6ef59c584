#!/usr/bin/env bash
# The command-line contract for bad input: exit status 2, exactly one line on
# stderr that names the problem, and no output file created or changed.
# usage: cli_bad_input.sh path/to/memcap
set -u
memcap=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect_bad "what it should mention" memcap-args...
expect_bad() {
    local needle=$1; shift
    local out="$work/out.csv"
    rm -f "$out"
    "$memcap" "$@" >"$work/stdout" 2>"$work/stderr"
    local status=$?
    local lines; lines=$(wc -l <"$work/stderr")
    if [[ $status -ne 2 ]]; then echo "FAIL ($*): exit $status, expected 2"; failures=$((failures + 1)); return; fi
    if [[ $lines -ne 1 ]]; then echo "FAIL ($*): $lines lines on stderr"; cat "$work/stderr"; failures=$((failures + 1)); return; fi
    if ! grep -qF -- "$needle" "$work/stderr"; then echo "FAIL ($*): stderr lacks '$needle': $(cat "$work/stderr")"; failures=$((failures + 1)); return; fi
    if compgen -G "$work/out.csv*" >/dev/null; then echo "FAIL ($*): left an output file"; failures=$((failures + 1)); return; fi
    echo "ok   ($*) -> $(cat "$work/stderr")"
}

o="$work/out.csv"
expect_bad "unknown memory 'nope'" run --memory nope --task assoc_recall --n 4 --out "$o"
expect_bad "softmax, linear" run --memory nope --task assoc_recall --n 4 --out "$o"
expect_bad "unknown task 'nope'" run --memory softmax --task nope --n 4 --out "$o"
expect_bad "unknown key 'gamma'" run --memory softmax:gamma=2 --task assoc_recall --n 4 --out "$o"
expect_bad "accepted: queries, noise, control" run --memory softmax --task assoc_recall:foo=1 --n 4 --out "$o"
expect_bad "is not key=value" run --memory softmax:beta --task assoc_recall --n 4 --out "$o"
expect_bad "missing key" run --memory softmax:=1 --task assoc_recall --n 4 --out "$o"
expect_bad "missing memory name" run --memory :beta=1 --task assoc_recall --n 4 --out "$o"
expect_bad "stray ','" run --memory softmax:beta=1, --task assoc_recall --n 4 --out "$o"
expect_bad "given twice" run --memory softmax:beta=1,beta=2 --task assoc_recall --n 4 --out "$o"
expect_bad "'nan' is not a finite number" run --memory softmax:beta=nan --task assoc_recall --n 4 --out "$o"
expect_bad "'inf' is not a finite number" run --memory softmax:beta=inf --task assoc_recall --n 4 --out "$o"
expect_bad "out of range" run --memory softmax:beta=-1 --task assoc_recall --n 4 --out "$o"
expect_bad "--n: '0' must be at least 1" run --memory softmax --task assoc_recall --n 0 --out "$o"
expect_bad "--n: '-4' must be at least 1" run --memory softmax --task assoc_recall --n -4 --out "$o"
expect_bad "--n: 'four' is not an integer" run --memory softmax --task assoc_recall --n four --out "$o"
expect_bad "does not fit in 64 bits" run --memory softmax --task assoc_recall --n 99999999999999999999 --out "$o"
expect_bad "--seeds: '0' must be at least 1" run --memory softmax --task assoc_recall --n 4 --seeds 0 --out "$o"
expect_bad "--d: '0' must be at least 1" run --memory softmax --task assoc_recall --n 4 --d 0 --out "$o"
expect_bad "--budget: '0' must be at least 1" run --memory softmax --task assoc_recall --n 4 --budget 0 --out "$o"
expect_bad "below its minimum of 128" run --memory softmax --task assoc_recall --n 4 --budget 100 --out "$o"
expect_bad "below its minimum of 64" run --memory linear --task assoc_recall --n 4 --budget 63 --out "$o"
expect_bad "--n is required" run --memory softmax --task assoc_recall --out "$o"
expect_bad "does not exist" run --memory softmax --task assoc_recall --n 4 --out "$work/no/such/dir/out.csv"
expect_bad "unknown readout" run --memory softmax --task assoc_recall --n 4 --readout psychic --out "$o"
expect_bad "unrecognised option" run --memory softmax --task assoc_recall --n 4 --bogus --out "$o"
expect_bad "unknown command 'runn'" runn
expect_bad "cannot open" aggregate "$work/missing.csv" --out "$o"

# A read-only directory (skipped as root, who may write anywhere).
if [[ $(id -u) -ne 0 ]]; then
    mkdir "$work/ro" && chmod 555 "$work/ro"
    expect_bad "not writable" run --memory softmax --task assoc_recall --n 4 --out "$work/ro/out.csv"
fi

# An existing output is never touched by a failing run.
echo "precious" >"$work/keep.csv"
"$memcap" run --memory nope --task assoc_recall --n 4 --out "$work/keep.csv" 2>/dev/null
if [[ $(cat "$work/keep.csv") != precious ]]; then echo "FAIL: a failing run changed an existing file"; failures=$((failures + 1)); fi

# A full disk: the run fails with status 2 and leaves nothing half-written.
if [[ -w /dev/full ]]; then
    "$memcap" run --memory softmax --task assoc_recall --n 4 --quiet >/dev/full 2>"$work/stderr"
    status=$?
    if [[ $status -ne 2 ]]; then echo "FAIL: writing to /dev/full exited $status"; failures=$((failures + 1)); else echo "ok   (stdout is /dev/full) -> $(cat "$work/stderr")"; fi
fi

if [[ $failures -ne 0 ]]; then echo "$failures bad-input case(s) failed"; exit 1; fi
echo "all bad-input cases passed"
