#!/usr/bin/env bash
# scripts/studies.sh, the one command that regenerates every study: it lists every study config in the
# repository (a new study's sweep cannot be left out), refuses bad options with one line and exit 2,
# and --dry-run estimates without writing anything.
# usage: studies_command.sh path/to/memcap repo-root
set -u
memcap=$1 root=$2
cmd=$root/scripts/studies.sh
fail() { echo "FAIL: $*"; exit 1; }

list=$(bash "$cmd" --list) || fail "--list exited $?"
for ini in "$root"/scripts/studies/*/*.ini "$root"/scripts/sweeps/capacity.ini "$root"/scripts/sweeps/frontier_large.ini; do
    rel=${ini#"$root"/}
    grep -q -- "$rel" <<< "$list" || fail "studies.sh does not run $rel"
done

expect_refused() {  # args...: exit 2, one line on stderr, nothing on stdout
    local err out rc
    err=$(mktemp)
    out=$(bash "$cmd" "$@" 2>"$err"); rc=$?
    [[ $rc == 2 ]] || fail "'$*' exited $rc, not 2"
    [[ $(wc -l < "$err") == 1 ]] || fail "'$*' printed $(wc -l < "$err") lines on stderr: $(cat "$err")"
    [[ -z $out ]] || fail "'$*' printed on stdout: $out"
    rm -f "$err"
}
expect_refused --only nosuchstudy "$memcap"
expect_refused --skip chains,nosuch "$memcap"
expect_refused --only chains --skip deep "$memcap"
expect_refused --threads 0 "$memcap"
expect_refused --bogus "$memcap"
expect_refused --dry-run --check "$memcap"
expect_refused --only chains /nonexistent/memcap

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A study config memcap refuses (here a memcap whose dry run fails) stops the command before any
# sweep, with one line naming the study and the config, not a missing estimate.
cat > "$tmp/memcap" <<'FAKE'
#!/usr/bin/env bash
if [[ $1 == sweep ]]; then echo "memcap: error: config '$2': no candidate width or setting can run at this budget" >&2; exit 2; fi
exec "$REAL_MEMCAP" "$@"
FAKE
chmod +x "$tmp/memcap"
REAL_MEMCAP=$memcap expect_refused --dry-run --only chains "$tmp/memcap"
err=$(REAL_MEMCAP=$memcap bash "$cmd" --dry-run --only chains "$tmp/memcap" 2>&1 >/dev/null)
grep -q "chains: scripts/studies/chains/chains.ini: memcap: error: .*no candidate" <<< "$err" || fail "the refusal does not name the study and config: $err"
out=$(bash "$cmd" --dry-run --only chains "$memcap" "$tmp/reports") || fail "--dry-run exited $?"
grep -q "chains: scripts/studies/chains/chains.ini: estimate: about" <<< "$out" || fail "no estimate in: $out"
grep -q "1 runs; their estimates sum to" <<< "$out" || fail "no total in: $out"
[[ -z $(ls -A "$tmp/reports") ]] || fail "--dry-run wrote $(ls -A "$tmp/reports")"

# The ETA: unscaled until three runs have finished, then scaled by the median of the finished runs'
# measured / estimated ratios (weighted by their times), not by the pooled ratio or the first
# run's. A copy of the command in a scratch tree with a reports.sh that does nothing, and a memcap
# whose dry runs estimate chains 1000 s, abstention and hybrids 100 s each, kv 100000 s, and whose
# sweeps take 1 s (chains) and 2 s (the others): timed in whole seconds, 1-2 s and 2-3 s (a sweep
# may straddle one more second), ratios 0.001-0.002 and 0.02-0.03, and the two runs of 2-3 s
# outweigh chains. At kv's start the median gives an ETA of 2000-3000 s from then; the pooled
# ratio (5-8 s / 1200 s) would give 417-667 s, the first run's 100-200 s. On a loaded machine a
# sweep can take a second or two longer than its sleep, so the expected ETA is the weighted median
# of the times the lines themselves show (each run's time is the next line's elapsed less its own,
# give or take the second a run may straddle), and no run may show less than its sleep.
fake=$tmp/root
mkdir -p "$fake/scripts" "$tmp/out"
cp "$cmd" "$fake/scripts/studies.sh"
printf '#!/usr/bin/env bash\nexit 0\n' > "$fake/scripts/reports.sh"
chmod +x "$fake/scripts/reports.sh"
cat > "$tmp/memcap_eta" <<'FAKE'
#!/usr/bin/env bash
[[ $1 == sweep ]] || exit 2
if [[ " $* " == *" --dry-run "* ]]; then
    case $2 in *chains*) e=1000 ;; *kv*) e=100000 ;; *) e=100 ;; esac
    echo "  estimate: about $(( 2 * e )) s of CPU time, $e s wall at 2 threads (timed 1 sample cells)"; exit 0
fi
case $2 in *chains*) sleep 1 ;; *) sleep 2 ;; esac
FAKE
chmod +x "$tmp/memcap_eta"
eta=$(bash "$fake/scripts/studies.sh" --only chains,abstention,hybrids,kv "$tmp/memcap_eta" "$tmp/out" 2>&1 >/dev/null |
      sed -nE 's/^studies: \[([0-9])\/4\].*\(elapsed ([0-9]+):([0-9]+), ETA for all ([0-9]+):([0-9]+)\)$/\1 \2 \3 \4 \5/p')
[[ $(wc -l <<< "$eta") == 4 ]] || fail "expected four ETA lines, got: $eta"
while read -r k em es m sec; do
    left=$(( 10#$m * 60 + 10#$sec - 10#$em * 60 - 10#$es ))  # the ETA less the time elapsed
    case $k in
        1) (( left == 101200 )) || fail "run 1's ETA is ${left} s from its start, not the estimates' sum 101200" ;;
        2) (( left == 100200 )) || fail "run 2's ETA is ${left} s from its start: scaled by one run (expected 100200, unscaled)" ;;
        3) (( left == 100100 )) || fail "run 3's ETA is ${left} s from its start: scaled by two runs (expected 100100, unscaled)" ;;
        4) eta4=$left ;;
    esac
    elapsed[k]=$(( 10#$em * 60 + 10#$es ))
done <<< "$eta"
t1=$(( elapsed[2] - elapsed[1] )) t2=$(( elapsed[3] - elapsed[2] )) t3=$(( elapsed[4] - elapsed[3] ))
(( t1 >= 1 && t2 >= 2 && t3 >= 2 )) || fail "the runs took ${t1}, ${t2} and ${t3} s by the lines: shorter than their sweeps"
# the ETA the weighted median gives for any times within a second of the lines' (the least and the most)
range=$(awk -v a="$t1" -v b="$t2" -v c="$t3" '
    function median(x, y, z,   r, w, i, j, t, total, sum) {
        r[1] = x / 1000; w[1] = x; r[2] = y / 100; w[2] = y; r[3] = z / 100; w[3] = z
        for (i = 1; i <= 3; ++i) for (j = i + 1; j <= 3; ++j) if (r[j] < r[i]) {
            t = r[i]; r[i] = r[j]; r[j] = t; t = w[i]; w[i] = w[j]; w[j] = t }
        total = w[1] + w[2] + w[3]
        for (i = 1; i <= 3; ++i) { sum += w[i]; if (2 * sum >= total) return r[i] }
    }
    BEGIN { lo = 1e18; hi = 0
        for (i = -1; i <= 1; ++i) for (j = -1; j <= 1; ++j) for (k = -1; k <= 1; ++k) {
            if (a + i < 1 || b + j < 2 || c + k < 2) continue  # no run is shorter than its sleep
            m = 100000 * median(a + i, b + j, c + k); if (m < lo) lo = m; if (m > hi) hi = m }
        printf "%d %d\n", lo - 1, hi + 1 }')
read -r lo hi <<< "$range"
(( eta4 >= lo && eta4 <= hi )) || fail "run 4's ETA is ${eta4} s from its start, not the weighted median's ${lo}-${hi} (the runs took ${t1}, ${t2}, ${t3} s)"
# unloaded (1-2, 2-3, 2-3 s) that is 2000-3000 s, where the pooled ratio gives 417-667 s and the first run's 100-200 s
if (( t1 <= 2 && t2 <= 3 && t3 <= 3 )); then
    (( eta4 >= 1900 && eta4 <= 3100 )) || fail "run 4's ETA is ${eta4} s from its start: not the median ratio's 2000-3000 (pooled: 417-667, first run's: 100-200)"
fi
echo "ok"
