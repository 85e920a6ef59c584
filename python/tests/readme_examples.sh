#!/usr/bin/env bash
# docs/python.md's commands, run as a user runs them: from another
# directory, with nothing on PYTHONPATH but the build tree's python/ directory.
# Also the README's `--d best` example: the widths and accuracies it quotes are the ones printed.
# usage: readme_examples.sh PYTHON BUILD/python SOURCE_ROOT [MEMCAP_BINARY]
set -euo pipefail
python=$1 pydir=$2 root=$3 memcap=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export PYTHONPATH=$pydir

out=$("$python" -c "import memcap; df = memcap.run(memories=['softmax','linear'], tasks=['assoc_recall'], n=[64,256], seeds=5); print(df.groupby(['memory_spec','n']).accuracy_frac.mean())")
echo "$out"
grep -q "^softmax:beta=16  *64 " <<<"$out"
grep -q "^linear:phi=proj,nu=1  *64 " <<<"$out"
grep -q "^  *256 " <<<"$out"

out=$("$python" "$root/examples/python_backend/linear_numpy.py")
echo "$out"
grep -q "linear_numpy" <<<"$out"

# The example's own build-tree command, as its docstring gives it (from the source root)
command=$(grep -m1 "PYTHONPATH=build/python" "$root/examples/python_backend/linear_numpy.py" | sed 's/#.*//')
[[ $command == *"/usr/bin/python3 examples/python_backend/linear_numpy.py"* ]]
if [[ -x /usr/bin/python3 && $(readlink -f "$pydir") == $(readlink -f "$root/build/python") ]]; then
    out=$(cd "$root" && eval "$command")
    grep -q "linear_numpy" <<<"$out"
fi
if [[ -n $memcap ]]; then
    # README: "the example above chooses d = D1 for HRR (A1% at n = 256) and d = D2 for the cache (A2%),
    # where 64-wide codes read B1% and B2%." Each quoted number must be what the example prints, to one
    # query of the 320 scored (a float-rounding tie flip between builds: 0.3 points).
    example=$(grep -m1 -- "--budget 4096 --d best --n 256 --seeds 10" "$root/README.md" | sed 's/ *#.*//')
    [[ $example == "build/memcap run -m hrr -m softmax -t assoc_recall --budget 4096 --d best --n 256 --seeds 10" ]] \
        || { echo "FAIL: the README's --d best example changed: $example"; exit 1; }
    quoted=$(tr '\n' ' ' <"$root/README.md" | grep -o 'chooses d = [0-9]* for HRR ([0-9.]*% at n = 256) *and d = [0-9]* for the cache ([0-9.]*%), where 64-wide codes read [0-9.]*% and [0-9.]*%')
    [[ -n $quoted ]] || { echo "FAIL: the README's sentence on the --d best example is not found"; exit 1; }
    read -r d1 a1 d2 a2 b1 b2 <<<"$(sed 's/[^0-9.]\+/ /g; s/^ //' <<<"$quoted" | awk '{print $1, $2, $4, $5, $7, $8}')"
    table() {  # table ARGS...: "d accuracy" per memory (hrr, then softmax) of the example at those widths
        "$memcap" run -m hrr -m softmax -t assoc_recall --budget 4096 --n 256 --seeds 10 --quiet "$@" --out "$work/x.csv" --force
        "$memcap" aggregate "$work/x.csv" --out "$work/x_summary.csv" --markdown "$work/x.md"
        grep '^| `' "$work/x.md" | awk -F'|' '{gsub(/[^0-9.]/, "", $4); gsub(/ /, "", $6); print $4, $6}'
    }
    best=$(table --d best) fixed=$(table --d 64)
    echo "README: d $d1 $a1%, d $d2 $a2%; 64-wide $b1% $b2%. Measured (d, %): $(tr '\n' ' ' <<<"$best")/ $(tr '\n' ' ' <<<"$fixed")"
    close() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a - b <= 0.32 && b - a <= 0.32) }'; }
    read -r md1 ma1 <<<"$(sed -n 1p <<<"$best")"; read -r md2 ma2 <<<"$(sed -n 2p <<<"$best")"
    read -r _ mb1 <<<"$(sed -n 1p <<<"$fixed")"; read -r _ mb2 <<<"$(sed -n 2p <<<"$fixed")"
    [[ $md1 == "$d1" && $md2 == "$d2" ]] || { echo "FAIL: the README says d = $d1 and $d2; the example chooses $md1 and $md2"; exit 1; }
    for pair in "$a1 $ma1" "$a2 $ma2" "$b1 $mb1" "$b2 $mb2"; do
        close $pair || { echo "FAIL: the README quotes ${pair% *}%; the example prints ${pair#* }%"; exit 1; }
    done
fi
echo "readme_examples: ok"
