#!/usr/bin/env bash
# A sweep block's `crossing` (docs/sweeps.md): probe n appear only strictly inside a bracketing
# pair of the grid's means (the last downward crossing), more seeds only at a bracket's ends and
# probes, up to the cap, and beyond it (the interval rule, `crossing_resolve`) only at 0.9's; with
# `crossing_resolve_probes`, probes inside a slot part's own bracket (overwrite_recall's untouched
# keys) where the cells' mean has none; the grid's rows are the same as without the key; the CSV is byte-identical at 1 and 2 threads, over
# 2 MPI ranks (given mpirun) and after a SIGKILL or SIGINT during a crossing round and --resume;
# bad crossing keys are refused with one line, exit status 2, nothing written.
# usage: sweep_crossing.sh path/to/memcap [path/to/mpirun]
set -uo pipefail
memcap=$1 mpirun=${2:-}
work=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. Bad keys: one line, exit 2, nothing written.
bad() {  # bad NAME 'block lines' 'expected words'
    printf '[block b]\nmemories = linear\ntasks = assoc_recall\nseeds = 4\n%b\n' "$2" >"$work/$1.ini"
    "$memcap" sweep "$work/$1.ini" --out "$work/out_$1" --quiet 2>"$work/err"
    local status=$?
    [[ $status -eq 2 ]] || fail "$1: exit $status, expected 2: $(cat "$work/err")"
    [[ $(wc -l <"$work/err") -eq 1 ]] || fail "$1: not one line: $(cat "$work/err")"
    grep -q "$3" "$work/err" || fail "$1: message lacks '$3': $(cat "$work/err")"
    [[ ! -e "$work/out_$1" ]] || fail "$1: wrote $work/out_$1"
}
bad above_one 'n = 4 16\ncrossing = 0.9 1' "strictly between 0 and 1"
bad zero 'n = 4 16\ncrossing = 0' "strictly between 0 and 1"
bad nan 'n = 4 16\ncrossing = nan' "strictly between 0 and 1"
bad word 'n = 4 16\ncrossing = high' "strictly between 0 and 1"
bad twice 'n = 4 16\ncrossing = 0.9 0.9' "given twice"
bad probes 'n = 4 16\ncrossing = 0.9\ncrossing_probes = 0' "crossing_probes"
bad cap 'n = 4 16\ncrossing = 0.9\ncrossing_seeds = 3' "below the block's seeds"
bad one_n 'n = 16\ncrossing = 0.9' "bracketed by two"
bad orphan 'n = 4 16\ncrossing_probes = 2' "needs 'crossing'"
bad resolve_other 'n = 4 16\ncrossing = 0.5\ncrossing_resolve = 0.9' "not among the block's crossing thresholds"
bad resolve_width 'n = 4 16\ncrossing = 0.9\ncrossing_resolve = 0.9\ncrossing_resolve_width = 1' "crossing_resolve_width"
bad resolve_cap 'n = 4 16\ncrossing = 0.9\ncrossing_resolve = 0.9\ncrossing_resolve_seeds = 8' "below the block's crossing_seeds"
bad resolve_orphan 'n = 4 16\ncrossing = 0.9\ncrossing_resolve_seeds = 80' "needs 'crossing_resolve'"
bad resolve_probes 'n = 4 16\ncrossing = 0.9\ncrossing_resolve = 0.9\ncrossing_resolve_probes = 0' "crossing_resolve_probes"
bad resolve_probes_orphan 'n = 4 16\ncrossing = 0.9\ncrossing_resolve_probes = 3' "needs 'crossing_resolve'"
echo "ok   bad crossing keys refused (one line, exit 2, nothing written)"

# 2. A d = best block: thread-count invariance, the grid's rows unchanged, probes inside brackets.
cat >"$work/cross.ini" <<'INI'
[sweep]
seeds = 4
budgets = 256
[block frontier]
memories = softmax:beta=best linear
tasks = assoc_recall
d = best
tuning_seeds = 2
n = 4..256*4
crossing = 0.5 0.9 0.99
crossing_probes = 2
crossing_seeds = 16
crossing_resolve = 0.9
crossing_resolve_seeds = 64
INI
grep -v '^crossing' "$work/cross.ini" >"$work/grid.ini"
"$memcap" sweep "$work/cross.ini" --out "$work/t1" --threads 1 --quiet || fail "threads 1"
"$memcap" sweep "$work/cross.ini" --out "$work/t2" --threads 2 --quiet || fail "threads 2"
cmp "$work/t1/cross.csv" "$work/t2/cross.csv" || fail "1 and 2 threads differ"
# The race file (NAME_race.csv): the same bytes at 1 and 2 threads, one row per raced group of
# the grid and of each crossing round, each naming the winner its cells report.
cmp "$work/t1/cross_race.csv" "$work/t2/cross_race.csv" || fail "race file: 1 and 2 threads differ"
python3 - "$work/t1/cross.csv" "$work/t1/cross_race.csv" <<'PY' || fail "race file"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
race = list(csv.DictReader(open(sys.argv[2])))
key = lambda r: (r["memory"], r["task_spec"], r["readout"], r["budget_floats"], r["n"])
won = {}
for r in race:
    assert key(r) not in won, ("two race rows for one group", key(r))
    won[key(r)] = r
    assert int(r["candidates"]) >= 2, r
    assert (int(r["seeds"]) >= 1) == (r["mean"] != "") or r["reason"] == "all failed", r  # 0: left alone along n
    assert int(r["seeds"]) >= 1 or (r["reason"] == "one left" and not r["runner_up"]), r
    assert r["reason"] in ("one left", "settled", "highest mean", "cheapest of near-ties", "all failed"), r["reason"]
    if r["runner_up"]:
        assert r["runner_up"] != r["tuned"], r
        assert abs(float(r["margin"]) - (float(r["mean"]) - float(r["runner_up_mean"]))) < 1e-5, r
        if r["reason"] == "highest mean" and r["runner_up_seeds"] == r["seeds"]:
            assert float(r["margin"]) >= 0, r  # (a runner-up that left earlier may read higher on fewer seeds)
for r in rows:
    assert won[key(r)]["tuned"] == r["tuned"], ("the race file's winner is not the cell's choice", key(r))
assert {r["round"] for r in race} > {"0"}, "no crossing round's races"
assert len(won) == len({key(r) for r in rows}), "a race row for a group without cells"
print(f"ok   race file: {len(race)} raced groups, each the choice its cells report")
PY
"$memcap" sweep "$work/grid.ini" --out "$work/g" --threads 2 --quiet || fail "grid"
grid_lines=$(wc -l <"$work/g/grid.csv")
head -n "$grid_lines" "$work/t1/cross.csv" | cmp - "$work/g/grid.csv" || fail "the grid's rows changed"
python3 - "$work/t1/cross.csv" "$((grid_lines - 1))" <<'PY' || fail "crossing rows"
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
grid, extra = rows[:int(sys.argv[2])], rows[int(sys.argv[2]):]
S, CAP, RCAP, TS, P = 4, 16, 64, (0.5, 0.9, 0.99), 2
key = lambda r: (r["memory"], r["task_spec"], r["readout"], r["budget_floats"])
acc = defaultdict(lambda: defaultdict(list))
for r in grid:
    acc[key(r)][int(r["n"])].append(float(r["accuracy_frac"]))
brackets, brackets9 = defaultdict(list), defaultdict(list)
for k, per_n in acc.items():
    ns = sorted(per_n)
    means = [sum(per_n[n]) / len(per_n[n]) for n in ns]
    for t in TS:
        last = max((i for i, m in enumerate(means) if m >= t), default=None)  # the last downward crossing
        if last is not None and last + 1 < len(ns):
            brackets[k].append((ns[last], ns[last + 1]))
            if t == 0.9:
                brackets9[k].append((ns[last], ns[last + 1]))
assert extra, "no crossing cells"
seen, probes, beyond = set(), set(), 0
for r in extra:
    k, n, s = key(r), int(r["n"]), int(r["seed"])
    assert (k, n, s) not in seen, ("duplicate cell", k, n, s)
    seen.add((k, n, s))
    assert s < RCAP, ("seed beyond the interval rule's cap", s)
    if s >= CAP:  # the interval rule's seeds: only where 0.9's n* is decided (checked below)
        beyond += 1
    inside = [(lo, hi) for lo, hi in brackets[k] if lo < n < hi]
    ends = [(lo, hi) for lo, hi in brackets[k] if n in (lo, hi)]
    if n in acc[k]:
        assert ends and s >= S, ("more seeds away from a bracket's end", k, n, s)
    else:
        assert inside, ("a probe outside every bracket", k, n, brackets[k])
        probes.add((k, n))
        want = set()
        for lo, hi in inside:
            want |= {round(lo * (hi / lo) ** (i / (P + 1))) for i in range(1, P + 1)}
        assert n in want, ("not a log-spaced probe", n, want)
assert probes, "no probe n"
assert beyond, "the interval rule added no seed beyond the separation rule's cap"
# Where the interval rule went beyond the cap: one of the two n the final curve's n* at 0.9 is
# interpolated between or their neighbours, or an n whose mean is within 3 standard errors of 0.9.
everything = defaultdict(lambda: defaultdict(list))
for r in rows:
    everything[key(r)][int(r["n"])].append(float(r["accuracy_frac"]))
for k, per_n in everything.items():
    ns = sorted(per_n)
    means = [sum(per_n[n]) / len(per_n[n]) for n in ns]
    last = max((i for i, m in enumerate(means) if m >= 0.9), default=None)
    # the final bracket's ends and their neighbours (a bracket an earlier round saw may have moved by one)
    ends = set(ns[max(last - 1, 0):last + 3]) if last is not None and last + 1 < len(ns) else set()
    for n, m in zip(ns, means):
        x = per_n[n]
        if len(x) <= CAP:
            continue
        sd = max((sum((v - m) ** 2 for v in x) / (len(x) - 1)) ** 0.5, (max(m * (1 - m), 0) / 32) ** 0.5)
        assert n in ends or abs(m - 0.9) <= 3 * sd / len(x) ** 0.5, ("seeds beyond the cap where 0.9 is not decided", k, n, m, len(x))
order = [(int(r["n"]), int(r["seed"])) for r in extra if key(r) == key(extra[0])]
assert order == sorted(order), "crossing rows not ordered by n, seed"
print(f"ok   {len(extra)} crossing rows: {len(probes)} probe n, all inside brackets; more seeds only at brackets' ends, {beyond} beyond the cap at 0.9's")
PY

# 2b. Reading probes (crossing_resolve_probes): the linear grid on overwrite_recall reads a rewritten
# key as the midpoint of its two values, so the cells' mean (over both slots) never reaches 0.9 and
# the interval rule alone leaves untouched keys' crossing on the grid's 4x ladder; with the key,
# probes land inside the untouched part's own bracket (the report's reading: every n, all seeds),
# at any thread count, and the grid's rows stay as they were.
cat >"$work/parts.ini" <<'INI'
[block parts]
memories = linear
tasks = overwrite_recall
budgets = 1024
d = 32
seeds = 4
n = 4..256*4
crossing = 0.9
crossing_probes = 2
crossing_seeds = 8
crossing_resolve = 0.9
crossing_resolve_seeds = 16
crossing_resolve_probes = 2
INI
grep -v '^crossing_resolve_probes' "$work/parts.ini" >"$work/noparts.ini"
"$memcap" sweep "$work/parts.ini" --out "$work/p1" --threads 1 --quiet || fail "parts, threads 1"
"$memcap" sweep "$work/parts.ini" --out "$work/p2" --threads 2 --quiet || fail "parts, threads 2"
cmp "$work/p1/parts.csv" "$work/p2/parts.csv" || fail "reading probes: 1 and 2 threads differ"
"$memcap" sweep "$work/noparts.ini" --out "$work/p0" --threads 1 --quiet || fail "parts without the key"
python3 - "$work/p1/parts.csv" "$work/p0/noparts.csv" <<'PY' || fail "reading probes"
import csv, math, sys
from collections import defaultdict
def curve(path, slot):
    per_n = defaultdict(list)
    for r in csv.DictReader(open(path)):
        if r["slot"] == slot and r["status"] == "ok":
            per_n[int(r["n"])].append(float(r["accuracy_frac"]))
    ns = sorted(per_n)
    return ns, [sum(per_n[n]) / len(per_n[n]) for n in ns]
def bracket(ns, means):
    last = max((i for i, m in enumerate(means) if m >= 0.9), default=None)
    return (ns[last], ns[last + 1]) if last is not None and last + 1 < len(ns) else None
with_key, without = bracket(*curve(sys.argv[1], "0")), bracket(*curve(sys.argv[2], "0"))
grid = {4, 16, 64, 256}
assert without and set(without) <= grid, ("without the key: no probe at the untouched part's crossing", without)
assert set(curve(sys.argv[2], "0")[0]) == grid, ("without the key: probes where the cells' mean has no crossing", curve(sys.argv[2], "0")[0])
assert with_key and with_key[0] >= without[0] and with_key[1] <= without[1] and with_key[1] / with_key[0] < 2, (
    "with the key: the untouched part's bracket not refined", with_key, without)
print("ok   reading probes: untouched keys' bracket %s without the key, %s with it" % (without, with_key))
PY
head -n "$(wc -l <"$work/p0/noparts.csv")" "$work/p1/parts.csv" | cmp - "$work/p0/noparts.csv" || fail "reading probes changed the grid's rows"

# 3. MPI: two ranks give the same bytes.
if [[ -n $mpirun ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
    "$mpirun" -np 2 "$memcap" sweep "$work/cross.ini" --out "$work/np2" --threads 1 --quiet || fail "mpirun -np 2"
    cmp "$work/t1/cross.csv" "$work/np2/cross.csv" || fail "-np 2 differs from one process"
    cmp "$work/t1/cross_race.csv" "$work/np2/cross_race.csv" || fail "race file: -np 2 differs from one process"
    "$mpirun" -np 2 "$memcap" sweep "$work/parts.ini" --out "$work/pnp2" --threads 1 --quiet || fail "parts: mpirun -np 2"
    cmp "$work/p1/parts.csv" "$work/pnp2/parts.csv" || fail "reading probes: -np 2 differs from one process"
    echo "ok   -np 2 identical to one process"
fi

# 4. Killed during a crossing round (SIGKILL, then SIGINT): --resume gives the same bytes.
# The sweep must still be running when its first crossing round has journaled a few cells: at
# d = 256 in the Release build; in the sanitizer build (MEMCAP_TEST_SANITIZED=1, set by
# tests/CMakeLists.txt), whose cells run about ten times slower, the same block at d = 128 and a
# quarter of the budget (a quarter of the work a write; its crossing round has 8 probes too).
width=256 budget=65536
[[ ${MEMCAP_TEST_SANITIZED:-0} == 1 ]] && width=128 budget=16384
cat >"$work/slow.ini" <<INI
[block big]
memories = delta
tasks = assoc_recall
d = $width
budgets = $budget
n = 64 256 1024
seeds = 40
crossing = 0.9
crossing_probes = 8
crossing_seeds = 40
crossing_resolve = 0.9
crossing_resolve_seeds = 80
crossing_resolve_probes = 2
INI
"$memcap" sweep "$work/slow.ini" --out "$work/ref" --threads 2 --quiet || fail "reference"
records() { local c; c=$(grep -c '^@' "$1" 2>/dev/null); echo "${c:-0}"; }
for sig in KILL INT; do
    dir="$work/kill$sig"
    "$memcap" sweep "$work/slow.ini" --out "$dir" --threads 1 --quiet 2>"$dir.stderr" &
    pid=$!
    for _ in $(seq 12000); do
        (($(records "$dir/slow.csv.crossing-1") >= 3)) && break
        kill -0 $pid 2>/dev/null || fail "$sig: sweep ended before a crossing round could be killed"
        sleep 0.02
    done
    kill -$sig $pid; wait $pid; status=$?; pid=
    [[ $sig == KILL || $status -eq 130 ]] || fail "SIGINT: exit $status, expected 130"
    [[ ! -e "$dir/slow.csv" ]] || fail "$sig: a CSV before the rounds were done"
    "$memcap" sweep "$work/slow.ini" --out "$dir" --threads 2 --resume --quiet 2>"$dir.resume" || fail "$sig: --resume: $(cat "$dir.resume")"
    cmp "$work/ref/slow.csv" "$dir/slow.csv" || fail "$sig: resumed CSV differs"
    ls "$dir" | grep -q 'crossing-' && fail "$sig: crossing journals left behind"
    echo "ok   SIG$sig during a crossing round: --resume gives the identical CSV"
done
exit 0
