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

# Sweeps: bad configs and output directories. Nothing may appear in the --out directory.
expect_bad_sweep() {
    local needle=$1; shift
    rm -rf "$work/sw"
    expect_bad "$needle" sweep "$@" --out "$work/sw" --quiet
    if [[ -e "$work/sw" ]]; then echo "FAIL (sweep $*): created the output directory"; failures=$((failures + 1)); fi
}
cfg() { printf '%s\n' "$@" >"$work/c.ini"; echo "$work/c.ini"; }
good=('[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 4')
expect_bad_sweep "does not exist" "$work/none.ini"
expect_bad_sweep "is a directory" "$work"
expect_bad_sweep "has no [block NAME] section" "$(cfg '')"
expect_bad_sweep "has no [block NAME] section" "$(cfg '[sweep]' 'seeds = 2')"
expect_bad_sweep "line 1" "$(cfg '[block b' 'n = 4')"
expect_bad_sweep "duplicate key" "$(cfg "${good[@]}" 'n = 8')"
expect_bad_sweep "unknown key 'memoriez'" "$(cfg '[block b]' 'memoriez = softmax' 'tasks = assoc_recall' 'n = 4')"
expect_bad_sweep "unknown section [blocks b]" "$(cfg '[blocks b]' 'memories = softmax')"
expect_bad_sweep "outside any section" "$(cfg 'seeds = 3' "${good[@]}")"
expect_bad_sweep "key 'tasks' is required" "$(cfg '[block b]' 'memories = softmax' 'n = 4')"
expect_bad_sweep "key 'n' has no value" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n =')"
expect_bad_sweep "unknown memory 'nope'" "$(cfg '[block b]' 'memories = softmax nope' 'tasks = assoc_recall' 'n = 4')"
expect_bad_sweep "unknown key 'gamma'" "$(cfg '[block b]' 'memories = softmax:gamma=1' 'tasks = assoc_recall' 'n = 4')"
expect_bad_sweep "n: '0' must be at least 1" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 0 4')"
expect_bad_sweep "n: 'four' is not an integer" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = four')"
expect_bad_sweep "ends below its start" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 64..4*2')"
expect_bad_sweep "factor of at least 2" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 4..64*1')"
expect_bad_sweep "below its minimum of 128" "$(cfg "${good[@]}" 'budgets = 100')"
expect_bad_sweep "'nan' is not a finite number" "$(cfg '[block b]' 'memories = softmax:beta=nan' 'tasks = assoc_recall' 'n = 4')"
expect_bad_sweep "seeds: '0' must be at least 1" "$(cfg "${good[@]}" 'seeds = 0')"
expect_bad_sweep "give one count" "$(cfg "${good[@]}" 'seeds = 1 2')"
expect_bad_sweep "unknown readout 'psychic'" "$(cfg "${good[@]}" 'readout = psychic')"
expect_bad_sweep "appears twice" "$(cfg "${good[@]}" '[block c]' 'memories = softmax:beta=16' 'tasks = assoc_recall' 'n = 2..4')"
expect_bad_sweep "appears twice" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 4 4')"
expect_bad_sweep "give the config file"
expect_bad_sweep "--threads: '0' must be at least 1" "$(cfg "${good[@]}")" --threads 0
expect_bad "does not exist" sweep "$(cfg "${good[@]}")" --out "$work/no/such/dir" --quiet
echo x >"$work/afile"
expect_bad "is not a directory" sweep "$(cfg "${good[@]}")" --out "$work/afile" --quiet
# An existing sweep is never overwritten without --resume.
"$memcap" sweep "$(cfg "${good[@]}")" --out "$work/done" --quiet
cp "$work/done/c.csv" "$work/c.csv.before"
expect_bad "already exists; pass --resume" sweep "$(cfg "${good[@]}")" --out "$work/done" --quiet
cmp -s "$work/c.csv.before" "$work/done/c.csv" || { echo "FAIL: a refused sweep changed the CSV"; failures=$((failures + 1)); }
expect_bad "differs from the one" sweep "$(cfg "${good[@]}" 'seeds = 2')" --out "$work/done" --resume --quiet

# A read-only directory (skipped as root, who may write anywhere).
if [[ $(id -u) -ne 0 ]]; then
    mkdir "$work/ro" && chmod 555 "$work/ro"
    expect_bad "not writable" run --memory softmax --task assoc_recall --n 4 --out "$work/ro/out.csv"
    expect_bad "not writable" sweep "$(cfg "${good[@]}")" --out "$work/ro" --quiet
    cfg "${good[@]}" >/dev/null && chmod 000 "$work/c.ini"
    expect_bad "cannot be read" sweep "$work/c.ini" --out "$work/sw" --quiet
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
