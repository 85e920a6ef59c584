#!/usr/bin/env bash
# docs/python.md's commands, run as a user runs them: from another
# directory, with nothing on PYTHONPATH but the build tree's python/ directory.
# usage: readme_examples.sh PYTHON BUILD/python SOURCE_ROOT
set -euo pipefail
python=$1 pydir=$2 root=$3
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
echo "readme_examples: ok"
