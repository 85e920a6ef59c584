#!/usr/bin/env bash
# `memcap run --out FILE` killed by SIGKILL cannot remove its FILE.tmp.PID; the next run with
# the same --out removes it (its process no longer runs) and names it on stderr, while a
# temporary of a live process is left alone. The finished FILE is complete either way.
# usage: run_kill_tmp.sh path/to/memcap
set -uo pipefail
memcap=$1
work=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
out=$work/out.csv

# A run slow enough to be killed while it works (its temporary is created before the first cell).
"$memcap" run --memory softmax --task assoc_recall --n 32768 --seeds 40 --threads 1 --quiet --out "$out" 2>/dev/null &
pid=$!
for _ in $(seq 600); do compgen -G "$out.tmp.*" >/dev/null && break; sleep 0.05; done
stale=$out.tmp.$pid
[[ -e $stale ]] || fail "no temporary $stale while the run works"
kill -9 $pid; wait $pid 2>/dev/null; pid=
[[ -e $stale && ! -e $out ]] || fail "after SIGKILL: expected $stale and no $out"

sleep 300 &  # a live process whose temporary must stay
live=$!
touch "$out.tmp.$live"
"$memcap" run --memory softmax --task assoc_recall --n 4 --seeds 2 --quiet --out "$out" 2>"$work/stderr" || fail "second run"
kill $live
[[ ! -e $stale ]] || fail "the dead process's $stale is still there"
grep -qF "removed '$stale', left by process" "$work/stderr" || fail "stderr does not name $stale: $(cat "$work/stderr")"
[[ -e $out.tmp.$live ]] || fail "the live process's temporary was removed"
[[ $(wc -l <"$out") -eq 3 ]] || fail "$out has $(wc -l <"$out") lines, expected a header and 2 rows"
echo "run_kill_tmp: ok (removed $(basename "$stale"), kept the live one's)"
