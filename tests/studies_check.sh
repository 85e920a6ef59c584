#!/usr/bin/env bash
# Every study config that scripts/studies.sh runs by default is one memcap accepts: each sweep's
# dry run gives an estimate. A change to the grid or the race that makes a study's config refused
# (as when d = best began racing the delta rule's step and frontier_large's largest cells no
# longer had a candidate) fails here, not an hour into `scripts/studies.sh`. And the trained study's
# estimate includes its training runs (they are most of its time).
# usage: studies_dry_run.sh path/to/memcap repo-root
set -u
memcap=$1 root=$2
fail() { echo "FAIL: $*"; exit 1; }
out=$(bash "$root/scripts/studies.sh" --dry-run "$memcap" 2>&1) || fail "studies.sh --dry-run exited $?: $out"
missing=$(grep -E '\.ini: *$' <<< "$out")
[[ -z $missing ]] || fail "no estimate for: $missing"
runs=$(grep -cE '\.ini: estimate: about' <<< "$out")
(( runs >= 17 )) || fail "only $runs sweeps estimated: $out"
# the trained study's estimate counts its training (timed steps scaled to the cap), not only its cells
train=$(sed -nE 's/^trained: .* ([0-9.]+(e[+]?[0-9]+)?) s for the training \(at the cap on steps\).*/\1/p' <<< "$out")
[[ -n $train ]] && awk -v t="$train" 'BEGIN { exit !(t > 0) }' || fail "the trained study's estimate has no training time: $(grep '^trained:' <<< "$out")"
echo "ok: $runs sweeps estimated (the trained study's training: $train s of CPU time)"
