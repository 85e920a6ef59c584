#!/usr/bin/env bash
# `memcap report` on a small sweep of a Python backend beside two built-ins, opened in a real
# headless browser (Debian's chromium): the page loads without a console message (errors,
# uncaught exceptions), shows every figure its Markdown lists (decoded: the page's own script
# counts them into #page-check) and both tables, and a screenshot of it is written and not blank.
# A control page with a deliberate console error must be caught, so the capture itself is tested.
# chromium missing is a failure, not a skip (scripts/setup.sh installs it with MEMCAP_TEST_DEPS=1).
# usage: report_browser.sh path/to/memcap BUILD/python SOURCE_ROOT
set -euo pipefail
memcap=$1 pydir=$2 root=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v chromium >/dev/null || fail "chromium is not installed (apt-get install chromium; scripts/setup.sh with MEMCAP_TEST_DEPS=1)"
browser() {  # browser OUT ERR ARGS... : one headless run, its console on ERR
    local out=$1 err=$2; shift 2
    timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
        --user-data-dir="$work/profile" --enable-logging=stderr --v=0 "$@" >"$out" 2>"$err"
}

# The capture works: a deliberate console.error and an uncaught exception are both seen.
printf '<!DOCTYPE html><html><body><p>control</p><script>console.error("deliberate"); notDefined();</script></body></html>\n' >"$work/control.html"
browser "$work/control.dom" "$work/control.err" --dump-dom "file://$work/control.html"
[[ $(grep -c 'CONSOLE' "$work/control.err") -ge 2 ]] || fail "the control page's console error was not captured: $(cat "$work/control.err")"
grep -q 'Uncaught ReferenceError' "$work/control.err" || fail "the control page's uncaught exception was not captured"

mkdir "$work/sweep"
PYTHONPATH=$pydir PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$root/tests/report/browser_sweep.py" "$root" "$work/sweep"
"$memcap" report "$work/sweep" --out "$work/report"
page=$work/report/report.html
for f in report.md capacity.csv figures/frontier_assoc_recall.png; do
    [[ -s $work/report/$f ]] || fail "memcap report wrote no $f"
done
for m in linear_numpy softmax hrr; do grep -q "^$m," "$work/report/capacity.csv" || fail "capacity.csv has no row of $m"; done
figures=$(grep -c '^!\[' "$work/report/report.md")
[[ $figures -ge 2 ]] || fail "report.md lists $figures figures"

browser "$work/page.dom" "$work/page.err" --dump-dom "file://$page"
if grep -q 'CONSOLE' "$work/page.err"; then fail "console messages: $(grep CONSOLE "$work/page.err")"; fi
check=$(grep -o '<p id="page-check">[^<]*' "$work/page.dom" | sed 's/.*>//')
[[ $check == "figures $figures, decoded $figures, tables 2" ]] || fail "page check '$check', expected $figures figures decoded and 2 tables"
for m in linear_numpy softmax hrr; do grep -q "<td>$m</td>" "$work/page.dom" || fail "the page shows no row of $m"; done

browser "$work/shot.out" "$work/shot.err" --hide-scrollbars --window-size=1280,1600 --screenshot="$work/shot.png" "file://$page"
[[ -s $work/shot.png ]] || fail "no screenshot written"
/usr/bin/python3 - "$work/shot.png" <<'PY'
import sys
import matplotlib.image as mpimg
img = mpimg.imread(sys.argv[1])[..., :3]  # floats in [0, 1]
dark = float((img.mean(axis=2) < 0.5).mean())  # text, lines, markers
coloured = float((img.std(axis=2) > 0.1).mean())  # the figures' coloured lines
print("screenshot %dx%d: %.3f of pixels dark, %.4f coloured" % (img.shape[1], img.shape[0], dark, coloured))
if dark < 0.005 or coloured < 0.0005:
    sys.exit("FAIL: the screenshot is blank (dark %.4f, coloured %.5f)" % (dark, coloured))
PY
echo "report_browser: ok ($figures figures, 2 tables, no console message)"
