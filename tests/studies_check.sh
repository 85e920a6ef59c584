#!/usr/bin/env bash
# Every study config that scripts/studies.sh runs (by default or on request) is one memcap accepts (`studies.sh
# --check`: memcap sweep --check on each, which builds every cell and every race's candidates and
# times nothing). A change to the grid or the race that makes a study's config refused (as when
# d = best began racing the delta rule's step and frontier_large's largest cells no longer had a
# candidate) fails here, not an hour into `scripts/studies.sh`. And the trained study's dry-run
# estimate includes its training runs (they are most of its time).
# usage: studies_check.sh path/to/memcap repo-root
set -u
memcap=$1 root=$2
fail() { echo "FAIL: $*"; exit 1; }
# the on-request studies too (the extra-large sweeps: checking them takes a fraction of a second)
all=$(bash "$root/scripts/studies.sh" --list | awk '{ printf "%s%s", (NR > 1 ? "," : ""), $1 }')
out=$(bash "$root/scripts/studies.sh" --check --only "$all" "$memcap" 2>&1) || fail "studies.sh --check exited $?: $out"
runs=$(grep -cE '\.ini: config ok, [0-9]+ cells' <<< "$out")
expected=$(bash "$root/scripts/studies.sh" --list | awk '{ n += NF - 2 } END { print n }')
(( runs == expected )) || fail "$runs of $expected sweeps checked: $out"
# a config memcap refuses is refused here too (frontier_large.ini as it was before its grids' settings were fixed)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/^memories = linear delta:beta=1 selective:rho=1$/memories = linear delta selective/' "$root/scripts/sweeps/frontier_large.ini" > "$tmp/frontier_large.ini"
cmp -s "$tmp/frontier_large.ini" "$root/scripts/sweeps/frontier_large.ini" && fail "frontier_large.ini's grids line changed: update this test"
err=$("$memcap" sweep "$tmp/frontier_large.ini" --check 2>&1 >/dev/null); rc=$?
[[ $rc == 2 ]] || fail "a refused config's --check exited $rc, not 2"
grep -q "no candidate width or setting can run at this budget" <<< "$err" || fail "the refusal does not say why: $err"
# the trained study's estimate counts its training (timed steps scaled to the cap), not only its cells
dry=$("$memcap" sweep "$root/scripts/studies/trained/trained.ini" --dry-run --out "$tmp" 2>&1) || fail "trained.ini --dry-run exited $?"
train=$(sed -nE 's/^ *estimate: .* ([0-9.]+(e[+]?[0-9]+)?) s for the training \(at the cap on steps\).*/\1/p' <<< "$dry")
[[ -n $train ]] && awk -v t="$train" 'BEGIN { exit !(t > 0) }' || fail "the trained study's estimate has no training time: $(grep estimate <<< "$dry")"
[[ -z $(ls -A "$tmp" | grep -v frontier_large.ini) ]] || fail "--dry-run or --check wrote $(ls -A "$tmp")"
echo "ok: $runs sweeps checked (the trained study's training: $train s of CPU time)"
