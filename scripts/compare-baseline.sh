#!/usr/bin/env bash
# Times `memcap reproduce` against its numpy baseline (scripts/baseline/reproduce_numpy.py,
# the same experiments at the same sample sizes), interleaved: memcap, numpy, memcap,
# numpy, ... and prints every time and the median ratio numpy / memcap (issue 7).
#
#   scripts/compare-baseline.sh [RUNS]        # default 5 runs of each
#
# Then one more run of each on one thread with --timings, printed side by side per
# experiment (numpy wall = its CPU at one thread; memcap CPU per experiment).
#
# Environment: MEMCAP (binary, default $MEMCAP_BUILD_DIR/memcap, build/memcap; built with
# scripts/setup.sh when missing), MEMCAP_THREADS (threads for both sides; default: the
# cores numpy's OpenBLAS uses, i.e. OPENBLAS_NUM_THREADS, else OMP_NUM_THREADS, else nproc).
#
# Fairness: numpy is /usr/bin/python3 with Debian's python3-numpy on OpenBLAS (the
# pthreads build, libopenblas0-pthread; Debian's default libblas3 is the unoptimised
# reference BLAS, so it is installed when missing). OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE are unset (together) so OpenBLAS picks its kernels for this CPU, and
# memcap runs with --threads equal to OpenBLAS's thread count. Times are wall-clock
# (the number a user waits for) and, beside them, CPU time (user + sys) of each run,
# which is less disturbed by other jobs on a shared machine.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-${MEMCAP_BASELINE_RUNS:-5}}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "compare-baseline: RUNS must be a positive integer, got '$runs'" >&2; exit 2; }
python=/usr/bin/python3
baseline=$root/scripts/baseline/reproduce_numpy.py

# ---- memcap
memcap=${MEMCAP:-${MEMCAP_BUILD_DIR:-$root/build}/memcap}
if [[ ! -x $memcap ]]; then
    echo "compare-baseline: $memcap not found; building with scripts/setup.sh" >&2
    bash "$root/scripts/setup.sh" >&2
fi

# ---- numpy on OpenBLAS
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
need=()
for p in python3-numpy libopenblas0-pthread; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
    echo "compare-baseline: installing ${need[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
blas=$("$python" -c '
import numpy as np
a = np.ones((64, 64)); a @ a
libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "blas" in l.lower() or "lapack" in l.lower()})
print(" ".join(libs) or "none")')
if [[ $blas != *openblas* ]]; then
    echo "compare-baseline: numpy is not using OpenBLAS ($blas); the baseline would be a strawman." >&2
    echo "  select it with: update-alternatives --config libblas.so.3-x86_64-linux-gnu" >&2
    exit 1
fi
threads=${MEMCAP_THREADS:-${OPENBLAS_NUM_THREADS:-${OMP_NUM_THREADS:-$(nproc)}}}
export OPENBLAS_NUM_THREADS=$threads

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "memcap : $memcap reproduce --out <tmpdir> --quiet --threads $threads  (OpenMP threads: $threads)"
echo "numpy  : $python $baseline --quiet  (numpy $("$python" -c 'import numpy; print(numpy.__version__)'), OpenBLAS threads: $threads, $blas)"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs   : $runs of each, interleaved, after one untimed warm-up of each"
echo

# time_run LABEL CMD... -> appends "wall cpu" to $tmp/LABEL.times
time_run() {
    local label=$1; shift
    local t0 t1
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%U %S" -o "$tmp/cpu" "$@" >/dev/null 2>"$tmp/err" || {
        echo "compare-baseline: $label failed:" >&2; cat "$tmp/err" >&2; exit 1; }
    t1=$EPOCHREALTIME
    read -r user sys <"$tmp/cpu"
    awk -v a="$t0" -v b="$t1" -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f %.3f\n", b - a, u + s }' >>"$tmp/$label.times"
}

run_memcap() { rm -rf "$tmp/out"; time_run "$1" "$memcap" reproduce --out "$tmp/out" --quiet --threads "$threads"; }
run_numpy() { time_run "$1" "$python" "$baseline" --quiet; }

run_memcap warmup_memcap
run_numpy warmup_numpy
printf "%4s  %18s  %18s  %8s\n" run "memcap wall (cpu)" "numpy wall (cpu)" "ratio"
for ((i = 1; i <= runs; ++i)); do
    run_memcap memcap
    run_numpy numpy
    m=$(tail -1 "$tmp/memcap.times"); n=$(tail -1 "$tmp/numpy.times")
    awk -v i="$i" -v m="$m" -v n="$n" 'BEGIN { split(m, a, " "); split(n, b, " ");
        printf "%4d  %8.3f s (%5.2f)  %8.3f s (%5.2f)  %7.2fx\n", i, a[1], a[2], b[1], b[2], b[1] / a[1] }'
done

"$python" - "$tmp/memcap.times" "$tmp/numpy.times" <<'EOF'
import statistics as st, sys
m = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
n = [tuple(map(float, l.split())) for l in open(sys.argv[2])]
wall = [b[0] / a[0] for a, b in zip(m, n)]
cpu = [b[1] / a[1] for a, b in zip(m, n)]
med = lambda xs, k: st.median(x[k] for x in xs)
print()
print(f"median wall time: memcap {med(m, 0):.3f} s, numpy {med(n, 0):.3f} s")
print(f"median CPU time : memcap {med(m, 1):.3f} s, numpy {med(n, 1):.3f} s")
print(f"median ratio numpy/memcap (wall, paired runs): {st.median(wall):.2f}x  (range {min(wall):.2f}-{max(wall):.2f})")
print(f"median ratio numpy/memcap (CPU time)         : {st.median(cpu):.2f}x  (range {min(cpu):.2f}-{max(cpu):.2f})")
print("target (issue 7): memcap >= 50x faster, i.e. a ratio >= 50")
EOF

# Where the time goes: one more run of each on ONE thread (OpenBLAS too), so that
# numpy's wall time per experiment and memcap's CPU time per experiment measure the
# same thing; both label their experiments alike.
echo
echo "per experiment, one thread each (numpy --timings wall, memcap reproduce --timings CPU):"
rm -rf "$tmp/out"
"$memcap" reproduce --out "$tmp/out" --quiet --threads 1 --timings 2>"$tmp/memcap.timings" >/dev/null
OPENBLAS_NUM_THREADS=1 "$python" "$baseline" --timings >"$tmp/numpy.timings"
"$python" - "$tmp/memcap.timings" "$tmp/numpy.timings" <<'EOF'
import re, sys
def table(path, start, stop):
    out, on = {}, False
    for line in open(path):
        if line.startswith(start):
            on = True
            continue
        if on and (not line.strip() or line.startswith(stop)):
            break
        m = re.match(r"\s+([0-9.]+)\s+(.*\S)", line)
        if on and m and m.group(2) != "total":
            out[m.group(2)] = float(m.group(1))
    return out
m = table(sys.argv[1], "timings: CPU seconds per experiment", "timings:")
n = table(sys.argv[2], "timings (s)", "total")
print(f"  {'experiment':45s} {'numpy s':>9s} {'memcap s':>9s} {'ratio':>8s}")
for name in n:
    if name in m:
        r = f"{n[name] / m[name]:7.1f}x" if m[name] > 0 else "      -"
        print(f"  {name:45s} {n[name]:9.3f} {m[name]:9.3f} {r}")
tn, tm = sum(n.values()), sum(v for k, v in m.items() if k in n)
print(f"  {'total (experiments in both)':45s} {tn:9.3f} {tm:9.3f} {tn / tm:7.1f}x")
EOF
