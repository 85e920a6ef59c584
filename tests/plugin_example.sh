#!/usr/bin/env bash
# The out-of-tree backend, as docs/extending.md's tutorial builds it: install memcap into a
# prefix under the build directory, build examples/out_of_tree_backend against the
# installed package (find_package(memcap)), and load the plugin into the installed
# memcap (list, run, a sweep's `plugins =` key), into the test binary (the
# conformance tests, which iterate over the registry) and, when the module was
# built, into Python (memcap.load_plugin). A plugin that cannot load, is not a
# plugin, or registers a name already taken is refused: one line, exit status 2.
# usage: plugin_example.sh BUILD_DIR SOURCE_ROOT MEMCAP_TESTS [PYTHON PYTHON_DIR]
set -euo pipefail
build=$(cd "$1" && pwd) root=$(cd "$2" && pwd) tests=$3 python=${4:-} pydir=${5:-}
work=$build/plugin-example
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
step() { echo "plugin_example: $*"; }

step "cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
step "configure and build examples/out_of_tree_backend against it"
cmake -S "$root/examples/out_of_tree_backend" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$work/configure.log"
cmake --build "$work/build" >"$work/build.log"
so=$work/build/libnearest_key.so
memcap=$prefix/bin/memcap
# the plugin carries no registry of its own: it leaves memcap's symbols to the host
nm -D --defined-only "$so" >"$work/symbols.txt"
if grep -q register_memory "$work/symbols.txt"; then
    echo "FAIL: the plugin defines register_memory (it must bind to the host's)"; exit 1
fi

step "memcap list / run --plugin"
"$memcap" list --plugin "$so" >"$work/list.txt"
grep -q "^  nearest_key — " "$work/list.txt"
"$memcap" run --plugin "$so" -m nearest_key -m softmax:beta=64 -t assoc_recall --n 16 256 --seeds 3 --quiet \
    --out "$work/run.csv"
grep -q '"plugins": \[' "$work/run.csv.manifest.json"
rows=$(grep -c '^nearest_key,' "$work/run.csv")
[[ $rows == 6 ]] || { echo "FAIL: $rows nearest_key rows, expected 6"; exit 1; }
if grep -q ',error,' "$work/run.csv"; then echo "FAIL: error rows"; cat "$work/run.csv"; exit 1; fi
# chained lookups and absent queries read through the plugin's own read like any backend's
"$memcap" run --plugin "$so" -m nearest_key -t chain_recall:hops=3 assoc_recall:absent=0.5 --n 16 --seeds 2 --quiet \
    --out "$work/chain.csv"
rows=$(grep -c '^nearest_key,' "$work/chain.csv")
[[ $rows == 8 ]] || { echo "FAIL: $rows nearest_key chain/absent rows, expected 8 (3 hops + 1, 2 seeds)"; exit 1; }
if grep -q ',error,' "$work/chain.csv"; then echo "FAIL: error rows"; cat "$work/chain.csv"; exit 1; fi

step "memcap sweep with 'plugins =' in the config (relative to the config's directory)"
cat >"$work/plugin_sweep.ini" <<INI
[sweep]
plugins = build/libnearest_key.so
seeds = 2
d = 32
[block recall]
memories = nearest_key softmax
tasks = assoc_recall lag_recall
budgets = 512 natural
n = 8 32
INI
(cd / && "$memcap" sweep "$work/plugin_sweep.ini" --out "$work/sweep" --quiet)
grep -q '"plugins"' "$work/sweep/plugin_sweep.csv.manifest.json"
[[ $(grep -c '^nearest_key' "$work/sweep/plugin_sweep.csv") -gt 0 ]]
"$memcap" aggregate "$work/sweep/plugin_sweep.csv" >/dev/null

step "refusals: one line, exit 2"
printf 'not a library\n' >"$work/text.so"
echo 'extern "C" int not_a_plugin() { return 1; }' >"$work/not_a_plugin.cpp"
c++ -shared -fPIC "$work/not_a_plugin.cpp" -o "$work/not_a_plugin.so"
cp "$so" "$work/copy_of_plugin.so"  # another file: loaded again, so its backend's name clashes
# the example compiled as if for another vector ISA (Eigen aligned to 8 bytes) and another version
c++ -std=c++17 -O1 -shared -fPIC -DEIGEN_MAX_ALIGN_BYTES=8 -DMEMCAP_VERSION='"0.3.0"' -I"$prefix/include" \
    -I"$prefix/include/memcap" -I/usr/include/eigen3 "$root/examples/out_of_tree_backend/nearest_key.cpp" \
    -o "$work/other_isa.so"
c++ -std=c++17 -O1 -shared -fPIC -DMEMCAP_VERSION='"0.0.1"' -I"$prefix/include" \
    -I"$prefix/include/memcap" -I/usr/include/eigen3 "$root/examples/out_of_tree_backend/nearest_key.cpp" \
    -o "$work/other_version.so"
expect_refused() {
    local needle=$1; shift
    set +e
    "$memcap" "$@" >"$work/stdout" 2>"$work/stderr"
    local status=$?
    set -e
    local lines; lines=$(wc -l <"$work/stderr")
    if [[ $status != 2 || $lines != 1 ]] || ! grep -qF -- "$needle" "$work/stderr"; then
        echo "FAIL (memcap $*): exit $status, $lines lines, expected 2 and one line with '$needle':"
        cat "$work/stderr"; exit 1
    fi
}
run=(-m softmax -t assoc_recall --n 8)
expect_refused "no such file" run --plugin "$work/missing.so" "${run[@]}"
expect_refused "cannot load" run --plugin "$work/text.so" "${run[@]}"
expect_refused "has no registration function" list --plugin "$work/not_a_plugin.so"
expect_refused "(Eigen alignment 8 bytes), this is memcap" list --plugin "$work/other_isa.so"
expect_refused "was built for memcap 0.0.1" list --plugin "$work/other_version.so"
expect_refused "already registered" run --plugin "$so" --plugin "$work/copy_of_plugin.so" "${run[@]}"
expect_refused "unknown memory 'nearest_key'" run -m nearest_key -t assoc_recall --n 8
printf '[sweep]\nplugins = missing.so\n[block a]\nmemories = softmax\ntasks = assoc_recall\nn = 8\n' >"$work/bad.ini"
expect_refused "[sweep] plugins: plugin '$work/missing.so': no such file" sweep "$work/bad.ini" --out "$work/bad"
printf '[block a]\nplugins = %s\nmemories = softmax\ntasks = assoc_recall\nn = 8\n' "$so" >"$work/bad2.ini"
expect_refused "belongs in [sweep]" sweep "$work/bad2.ini" --out "$work/bad"
[[ ! -e $work/bad ]] || { echo "FAIL: a refused sweep wrote $work/bad"; exit 1; }

step "the conformance tests on the plugin (memcap_tests [conformance])"
MEMCAP_TEST_PLUGINS=$so "$tests" "[conformance]" >"$work/conformance.log" 2>&1 ||
    { cat "$work/conformance.log"; exit 1; }
grep -q "backends: .*nearest_key" "$work/conformance.log" ||
    { echo "FAIL: the test binary did not register nearest_key"; cat "$work/conformance.log"; exit 1; }
tail -3 "$work/conformance.log"

if [[ -n $python ]]; then
    step "memcap.load_plugin from Python"
    PYTHONPATH=$pydir "$python" - "$so" <<'PY'
import sys
import memcap
memcap.load_plugin(sys.argv[1])
memcap.load_plugin(sys.argv[1])  # the same file again: nothing happens
assert "nearest_key" in [m["name"] for m in memcap.list()["memories"]]
df = memcap.run(memories=["nearest_key"], tasks="assoc_recall", n=64, seeds=3, progress=False)
# hard attention reads every stored pair back from its clean key
assert (df.status == "ok").all() and (df.accuracy_frac == 1).all(), df
m = memcap.Memory("nearest_key", d=8, budget=32)
print("python: ok,", m.spec, "state_floats", m.state_floats)
PY
    # a sweep whose config loads the plugin, from a fresh interpreter
    PYTHONPATH=$pydir "$python" -c "import memcap, sys; df = memcap.sweep(sys.argv[1], out=sys.argv[2], progress=False); assert 'nearest_key' in set(df.memory_spec)" \
        "$work/plugin_sweep.ini" "$work/python_sweep"
    cmp "$work/python_sweep/plugin_sweep.csv" "$work/sweep/plugin_sweep.csv"
fi
step "ok"
