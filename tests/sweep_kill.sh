#!/usr/bin/env bash
# Crash safety of `memcap sweep`, on a real process: after SIGKILL (plus a torn
# record appended to the journal), SIGINT and SIGTERM, `--resume` finishes the
# sweep and the CSV is byte-identical to an uninterrupted run, also for a d = best sweep
# killed during its tuning or its scored cells (the tuning cells are journaled). Also: no
# overwrite without --resume, exit statuses 130/143, a different config is refused.
# usage: sweep_kill.sh path/to/memcap
set -uo pipefail
memcap=$1
work=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Big cells (~0.15 s each), so a sweep is still running when it is killed.
# MEMCAP_SWEEP_KILL_N picks smaller ones for slower builds (the sanitizer build), and
# MEMCAP_SWEEP_KILL_BUDGET a smaller budget for the d = best sweep (part 3). The waits
# for journaled cells are bounded at minutes, not seconds: a slow machine only waits longer.
mkdir -p "$work/cfg" "$work/other"
cat >"$work/cfg/slow.ini" <<INI
[sweep]
seeds = 12
[block big]
memories = softmax linear
tasks = assoc_recall
n = ${MEMCAP_SWEEP_KILL_N:-32768}
INI
sed 's/seeds = 12/seeds = 13/' "$work/cfg/slow.ini" >"$work/other/slow.ini"

"$memcap" sweep "$work/cfg/slow.ini" --out "$work/ref" --threads 2 --quiet || fail "reference sweep"
ref="$work/ref/slow.csv"
[[ $(wc -l <"$ref") -eq 25 ]] || fail "reference has $(wc -l <"$ref") lines"

records() { local c; c=$(grep -c '^@' "$1" 2>/dev/null); echo "${c:-0}"; }

# start_and_wait DIR: starts a sweep into DIR in the background and waits until 3 cells are journaled
start_and_wait() {
    "$memcap" sweep "$work/cfg/slow.ini" --out "$1" --threads 2 --quiet 2>"$1.stderr" &
    pid=$!
    for _ in $(seq 12000); do
        (($(records "$1/slow.csv.journal") >= 3)) && return 0
        kill -0 $pid 2>/dev/null || fail "sweep ended before it could be killed"
        sleep 0.025
    done
    fail "no journaled cells after 5 min"
}

# resume_and_compare DIR: --resume finishes and gives the reference CSV
resume_and_compare() {
    "$memcap" sweep "$work/cfg/slow.ini" --out "$1" --threads 2 --resume --quiet 2>"$1.resume.stderr" ||
        fail "--resume in $1 exited $?: $(cat "$1.resume.stderr")"
    cmp "$ref" "$1/slow.csv" || fail "resumed CSV in $1 differs from the uninterrupted run"
    [[ ! -e "$1/slow.csv.journal" ]] || fail "journal left behind in $1"
}

# 1. SIGKILL mid-sweep, then a torn record at the end of the journal.
start_and_wait "$work/kill"
kill -9 $pid; wait $pid 2>/dev/null; pid=
[[ ! -e "$work/kill/slow.csv" ]] || fail "killed sweep left a CSV"
done_cells=$(records "$work/kill/slow.csv.journal")
((done_cells >= 3 && done_cells < 24)) || fail "$done_cells cells journaled before SIGKILL"
printf '@5 1 0123456789abcdef\nsoftmax:beta=16,"assoc_recall:que' >>"$work/kill/slow.csv.journal"
cp "$work/kill/slow.csv.journal" "$work/journal.before"
# no --resume: refused (exit 2, one line), nothing changed
"$memcap" sweep "$work/cfg/slow.ini" --out "$work/kill" --quiet 2>"$work/err"
[[ $? -eq 2 && $(wc -l <"$work/err") -eq 1 ]] && grep -q "already exists" "$work/err" || fail "overwrite without --resume: $(cat "$work/err")"
cmp "$work/journal.before" "$work/kill/slow.csv.journal" || fail "refused sweep changed the journal"
# a different config under the same name: refused
"$memcap" sweep "$work/other/slow.ini" --out "$work/kill" --resume --quiet 2>"$work/err"
[[ $? -eq 2 && $(wc -l <"$work/err") -eq 1 ]] && grep -q "differs" "$work/err" || fail "changed config on --resume: $(cat "$work/err")"
resume_and_compare "$work/kill"
grep -q "dropped an incomplete record" "$work/kill.resume.stderr" || fail "torn record not reported"
echo "ok   SIGKILL after $done_cells cells + torn record: --resume gives the identical CSV"

# 2. SIGINT and SIGTERM: clean stop, status 130 / 143, completed cells kept.
for sig in INT TERM; do
    dir="$work/sig$sig"
    start_and_wait "$dir"
    kill -$sig $pid; wait $pid; status=$?; pid=
    expect=130; [[ $sig == TERM ]] && expect=143
    [[ $status -eq $expect ]] || fail "SIG$sig: exit $status, expected $expect"
    [[ ! -e "$dir/slow.csv" ]] || fail "SIG$sig left a CSV"
    kept=$(records "$dir/slow.csv.journal")
    ((kept >= 3)) || fail "SIG$sig kept $kept cells"
    [[ $(tail -c1 "$dir/slow.csv.journal" | od -An -c | tr -d ' ') == '\n' ]] || fail "SIG$sig left a torn journal"
    grep -q -- "--resume" "$dir.stderr" || fail "SIG$sig: no hint to resume: $(cat "$dir.stderr")"
    resume_and_compare "$dir"
    echo "ok   SIG$sig: exit $status with $kept cells kept; --resume gives the identical CSV"
done

# 3. A sweep that chooses widths (d = best): its tuning cells are journaled too
#    (NAME.csv.tuning), so a kill during the tuning or during the scored cells resumes
#    without computing again what was done, to the same CSV.
cat >"$work/cfg/best.ini" <<INI
[sweep]
seeds = 6
[block best]
memories = hrr softmax:beta=best
tasks = assoc_recall
budgets = ${MEMCAP_SWEEP_KILL_BUDGET:-4096}
d = best
tuning_seeds = 2
n = 256 1024
[block big]
memories = softmax
tasks = assoc_recall
n = ${MEMCAP_SWEEP_KILL_N:-32768}
INI
"$memcap" sweep "$work/cfg/best.ini" --out "$work/bref" --threads 2 --quiet || fail "reference d = best sweep"
[[ ! -e "$work/bref/best.csv.tuning" ]] || fail "tuning journal left behind by a finished sweep"
[[ -s "$work/bref/best_race.csv" ]] || fail "no race file beside a d = best sweep"
# kill_when DIR FILE K: starts the d = best sweep into DIR, SIGKILLs it once FILE holds K records
kill_when() {
    "$memcap" sweep "$work/cfg/best.ini" --out "$1" --threads 2 --quiet 2>"$1.stderr" &
    pid=$!
    for _ in $(seq 12000); do
        if (($(records "$1/$2") >= $3)); then
            kill -9 $pid; wait $pid 2>/dev/null; pid=
            return 0
        fi
        kill -0 $pid 2>/dev/null || fail "d = best sweep ended before it could be killed"
        sleep 0.025
    done
    fail "no $2 records after 5 min"
}
kill_when "$work/tkill" best.csv.tuning 5
((cells_done = $(records "$work/tkill/best.csv.journal"))) && fail "killed during tuning, yet $cells_done cells done"
tuned=$(records "$work/tkill/best.csv.tuning")
"$memcap" sweep "$work/cfg/best.ini" --out "$work/tkill" --threads 2 --resume 2>"$work/tkill.resume.stderr" ||
    fail "--resume after a kill in the tuning: $(cat "$work/tkill.resume.stderr")"
cmp "$work/bref/best.csv" "$work/tkill/best.csv" || fail "resumed d = best CSV (killed in the tuning) differs"
cmp "$work/bref/best_race.csv" "$work/tkill/best_race.csv" || fail "resumed race file (killed in the tuning) differs"
grep -Eq "tuning cells computed and [0-9]+ kept from before" "$work/tkill.resume.stderr" ||
    fail "the resume did not reuse the journaled tuning cells: $(grep tuning "$work/tkill.resume.stderr")"
[[ ! -e "$work/tkill/best.csv.tuning" ]] || fail "tuning journal left behind after the resume"
echo "ok   SIGKILL in the tuning ($tuned tuning cells journaled): --resume reuses them, identical CSV"
kill_when "$work/ckill" best.csv.journal 2
"$memcap" sweep "$work/cfg/best.ini" --out "$work/ckill" --threads 2 --resume 2>"$work/ckill.resume.stderr" ||
    fail "--resume after a kill in the scored cells: $(cat "$work/ckill.resume.stderr")"
cmp "$work/bref/best.csv" "$work/ckill/best.csv" || fail "resumed d = best CSV (killed in the scored cells) differs"
cmp "$work/bref/best_race.csv" "$work/ckill/best_race.csv" || fail "resumed race file (killed in the scored cells) differs"
grep -Eq "memcap: 0 tuning cells computed and [0-9]+ kept from before" "$work/ckill.resume.stderr" ||
    fail "the resume computed tuning cells again: $(grep tuning "$work/ckill.resume.stderr")"
echo "ok   SIGKILL in the scored cells of a d = best sweep: --resume computes no tuning cell, identical CSV"

# 4. --resume of a complete sweep changes nothing.
"$memcap" sweep "$work/cfg/slow.ini" --out "$work/ref" --resume --quiet 2>/dev/null || fail "--resume of a complete sweep"
echo "all crash-safety checks passed"
