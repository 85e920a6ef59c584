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

# The ETA: unscaled until three runs have finished, then scaled by the median measured / estimated
# ratio (not by the first run's alone). A copy of the command in a scratch tree with a reports.sh
# that does nothing, and a memcap whose dry run estimates 100 s wall a sweep and whose sweep takes 1 s.
fake=$tmp/root
mkdir -p "$fake/scripts" "$tmp/out"
cp "$cmd" "$fake/scripts/studies.sh"
printf '#!/usr/bin/env bash\nexit 0\n' > "$fake/scripts/reports.sh"
chmod +x "$fake/scripts/reports.sh"
cat > "$tmp/memcap_eta" <<'FAKE'
#!/usr/bin/env bash
[[ $1 == sweep ]] || exit 2
if [[ " $* " == *" --dry-run "* ]]; then echo "  estimate: about 200 s of CPU time, 100 s wall at 2 threads (timed 1 sample cells)"; exit 0; fi
sleep 1
FAKE
chmod +x "$tmp/memcap_eta"
eta=$(bash "$fake/scripts/studies.sh" --only chains,abstention,hybrids,kv "$tmp/memcap_eta" "$tmp/out" 2>&1 >/dev/null |
      sed -nE 's/^studies: \[([0-9])\/4\].*ETA for all ([0-9]+):([0-9]+)\)$/\1 \2 \3/p')
[[ $(wc -l <<< "$eta") == 4 ]] || fail "expected four ETA lines, got: $eta"
while read -r k m sec; do
    t=$(( 10#$m * 60 + 10#$sec ))
    case $k in
        1) (( t == 400 )) || fail "run 1's ETA is ${m}:${sec}, not the estimates' sum 6:40" ;;
        2|3) (( t >= 100 * (5 - k) )) || fail "run $k's ETA is ${m}:${sec}: scaled by too few runs (expected about $(( 100 * (5 - k) )) s more)" ;;
        4) (( t < 60 )) || fail "run 4's ETA is ${m}:${sec}: not scaled by the three runs' ratio (about 0.01)" ;;
    esac
done <<< "$eta"
echo "ok"
