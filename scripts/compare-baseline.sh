#!/usr/bin/env bash
# Times memcap against its numpy and PyTorch peers, interleaved (memcap, numpy, torch,
# memcap, numpy, torch, ...), on two workloads:
#   (a) `memcap reproduce` vs scripts/baseline/reproduce_numpy.py and reproduce_torch.py
#       (the same experiments at the same sample sizes);
#   (b) one associative-recall sweep block,
#       `memcap run -m softmax -m linear -m delta -m hrr -t assoc_recall
#        --n 4 8 16 32 64 128 256 512 --seeds 200 --d 64`,
#       vs scripts/baseline/assoc_block_numpy.py and assoc_block_torch.py (the same work).
# For each it prints every time and the median ratios numpy / memcap and torch / memcap.
#
#   scripts/compare-baseline.sh [RUNS]        # default 5 runs of each
#
# For (b) it also prints the block's arithmetic lower bound and memcap's time over it
# (memcap / bound), measured in the same run by build/bench/memcap_block_bound
# (bench/block_bound.cpp; built here when missing), given the block's own arguments:
#   work   the FLOPs of every cell from each memory's declared cost model (write_batch of
#          the n pairs, read_batch of the queries; memories/<name>/entry.cpp), plus the
#          scoring of each read against the n candidates (2 · queries · n · d per memory
#          and seed), and the normals the episodes draw (keys and values, 2 · n · d per
#          n and seed; the four memories read one shared episode);
#   rates  SGEMM (Eigen, 1024³) and Rng::fill_normal, one thread, median of 5 by thread
#          CPU time, measured just before the block's runs;
#   bound  CPU = FLOPs / SGEMM rate + normals / normal rate on one core — a sum, not a
#          max: both are work of the same core's vector units, one after the other, not
#          two resources that overlap as compute and memory traffic do in a roofline —
#          and wall = CPU / threads (a perfect split).
# memcap / bound is given for wall time (against the wall bound on the run's threads) and
# for CPU time (user + sys against the one-core bound), which moves less on a shared
# machine. The SGEMM rate is what a large GEMM reaches, so the bound is a floor that the
# block's small GEMMs, FFTs and softmax cannot quite reach; it is not a prediction.
#
# Then one more run of each `reproduce` on one thread with --timings, printed side by
# side per experiment (numpy and torch wall = their CPU at one thread; memcap CPU per
# experiment).
#
# Environment: MEMCAP (binary, default $MEMCAP_BUILD_DIR/memcap, build/memcap; built with
# scripts/setup.sh when missing), MEMCAP_THREADS (threads for every side; default: the
# cores numpy's OpenBLAS uses, i.e. OPENBLAS_NUM_THREADS, else OMP_NUM_THREADS, else nproc).
#
# Fairness: numpy and torch run on /usr/bin/python3 with Debian's python3-numpy and
# python3-torch, both on OpenBLAS (Debian's default libblas3 is the unoptimised
# reference BLAS). numpy uses the pthreads build (libopenblas0-pthread, the system's
# libblas.so.3). torch uses the OpenMP build (libopenblas0-openmp, put first on
# LD_LIBRARY_PATH for the torch processes only; the system's choice is left alone), so
# that its own OpenMP ops and its GEMMs share one thread pool, as upstream torch's
# builds do with MKL; with the pthreads build, torch's OpenMP workers and OpenBLAS's
# pthreads spin against each other on 2 cores (measured: reproduce_torch.py 4.4-6.8 s
# against 2.7-3.0 s). These packages and python3-torch are installed here when missing,
# for this comparison only (the tests never use torch). OMP_WAIT_POLICY defaults to
# passive for every side (memcap's OpenMP, torch's, OpenBLAS's OpenMP build): on a
# shared machine, idle OpenMP workers spinning at each of torch's many small parallel
# regions take the cores that the other jobs and the working threads need (measured,
# load average ~4: reproduce_torch.py 10.7 s active against 3.7 s passive, the assoc
# block 3.6-3.9 s against 1.0 s; memcap unchanged within noise). Set OMP_WAIT_POLICY
# to override. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset (together) so OpenBLAS
# picks its kernels for this CPU; memcap runs with --threads, torch with
# torch.set_num_threads, and OpenBLAS with OPENBLAS_NUM_THREADS, all the same count.
# Times are wall-clock of the whole process (the number a user waits for, so the
# interpreter's start and its imports count) and, beside them, CPU time (user + sys)
# of each run (bash's time, to the ms), which is less disturbed by other jobs on a shared
# machine; the peers' own totals (their work without start-up and imports) are
# summarised too.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-${MEMCAP_BASELINE_RUNS:-5}}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "compare-baseline: RUNS must be a positive integer, got '$runs'" >&2; exit 2; }
python=/usr/bin/python3
base=$root/scripts/baseline
assoc_n=(4 8 16 32 64 128 256 512)
assoc_args=(-m softmax -m linear -m delta -m hrr -t assoc_recall --n "${assoc_n[@]}" --seeds 200 --d 64)

# ---- memcap
memcap=${MEMCAP:-${MEMCAP_BUILD_DIR:-$root/build}/memcap}
if [[ ! -x $memcap ]]; then
    echo "compare-baseline: $memcap not found; building with scripts/setup.sh" >&2
    bash "$root/scripts/setup.sh" >&2
fi

# ---- the block's arithmetic bound (bench/block_bound.cpp)
bound_bin=${MEMCAP_BUILD_DIR:-$root/build}/bench/memcap_block_bound
if [[ ! -x $bound_bin ]]; then
    echo "compare-baseline: $bound_bin not found; building it" >&2
    cmake --build "${MEMCAP_BUILD_DIR:-$root/build}" -j "${MEMCAP_JOBS:-$(nproc)}" --target memcap_block_bound >&2 ||
        echo "compare-baseline: could not build it (a build without bench/?); the bound is left out" >&2
fi

# ---- numpy and torch on OpenBLAS
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
need=()
for p in python3-numpy python3-torch libopenblas0-pthread libopenblas0-openmp; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
    echo "compare-baseline: installing ${need[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# torch's processes: OpenBLAS's OpenMP build first on the library path
omp_blas=$(dpkg -L libopenblas0-openmp | grep '/openblas-openmp/libblas\.so\.3$')
omp_blas=${omp_blas%/*}
torch_env=(env "LD_LIBRARY_PATH=$omp_blas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
# the BLAS and LAPACK libraries a python snippet has loaded once it has done a GEMM
blas_of() {
    "${@:2}" "$python" -c "$1"'
libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "blas" in l.lower() or "lapack" in l.lower()})
print(" ".join(libs) or "none")'
}
blas=$(blas_of 'import numpy as np; a = np.ones((64, 64)); a @ a')
torch_blas=$(blas_of 'import torch; a = torch.ones(64, 64); a @ a' "${torch_env[@]}")
for side in numpy torch; do
    libs=$blas want=openblas what=OpenBLAS
    [[ $side == torch ]] && libs=$torch_blas want=openblas-openmp what="OpenBLAS's OpenMP build"
    if [[ $libs != *$want* ]]; then
        echo "compare-baseline: $side is not using $what ($libs); the baseline would be a strawman." >&2
        [[ $side == numpy ]] && echo "  select it with: update-alternatives --config libblas.so.3-x86_64-linux-gnu" >&2
        exit 1
    fi
done
threads=${MEMCAP_THREADS:-${OPENBLAS_NUM_THREADS:-${OMP_NUM_THREADS:-$(nproc)}}}
export OPENBLAS_NUM_THREADS=$threads

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# wall seconds of `[ENV...] python3 -c CODE`, best of 3 (interpreter start + imports)
startup() {
    local best=""
    for _ in 1 2 3; do
        local t0=$EPOCHREALTIME
        "${@:2}" "$python" -c "$1"
        best=$(awk -v a="$t0" -v b="$EPOCHREALTIME" -v c="$best" 'BEGIN { t = b - a; print (c == "" || t < c) ? t : c }')
    done
    printf "%.2f s" "$best"
}

np_version=$("$python" -c 'import numpy; print(numpy.__version__)')
torch_version=$("$python" -c 'import torch; print(torch.__version__)')
echo "memcap : $memcap --threads $threads  (OpenMP threads: $threads, OMP_WAIT_POLICY=$OMP_WAIT_POLICY)"
echo "numpy  : $python, numpy $np_version, OpenBLAS threads: $threads, $blas"
echo "torch  : $python, torch $torch_version, torch.set_num_threads($threads), OpenBLAS threads: $threads, $torch_blas"
echo "start-up (python3 + import, best of 3): numpy $(startup 'import numpy'), torch $(startup 'import torch' "${torch_env[@]}")"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs   : $runs of each, interleaved, after one untimed warm-up of each"

# time_run LABEL CMD... -> appends "wall cpu own" to $tmp/LABEL.times, where own is the
# last number the command printed on stdout (a peer's own total), 0 if none
time_run() {
    local label=$1; shift
    local t0 t1 TIMEFORMAT='%3U %3S'  # bash's time: user and sys of the command to the ms
    t0=$EPOCHREALTIME
    { time "$@" >"$tmp/out.txt" 2>"$tmp/err"; } 2>"$tmp/cpu" || {
        echo "compare-baseline: $label failed:" >&2; cat "$tmp/err" >&2; exit 1; }
    t1=$EPOCHREALTIME
    read -r user sys <"$tmp/cpu"
    own=$(grep -oE '[0-9]+\.[0-9]+ s$' "$tmp/out.txt" | tail -1 | cut -d' ' -f1 || true)
    awk -v a="$t0" -v b="$t1" -v u="$user" -v s="$sys" -v o="${own:-0}" \
        'BEGIN { printf "%.3f %.3f %.3f\n", b - a, u + s, o }' >>"$tmp/$label.times"
}

run_reproduce_memcap() { rm -rf "$tmp/out"; time_run "$1" "$memcap" reproduce --out "$tmp/out" --quiet --threads "$threads"; }
run_reproduce_numpy() { time_run "$1" "$python" "$base/reproduce_numpy.py" --quiet; }
run_reproduce_torch() { time_run "$1" "${torch_env[@]}" "$python" "$base/reproduce_torch.py" --quiet --threads "$threads"; }
# each run writes a new CSV, as reproduce writes a new directory: the previous run's output is
# removed first, untimed (replacing a 1.3 MB file took ~0.8 ms more in the rename on this
# machine's disk, mounted with online discard; the peers write no file at all)
run_assoc_memcap() {
    rm -f "$tmp/assoc.csv" "$tmp/assoc.csv.manifest.json"
    time_run "$1" "$memcap" run "${assoc_args[@]}" --quiet --threads "$threads" --out "$tmp/assoc.csv"
}
run_assoc_numpy() { time_run "$1" "$python" "$base/assoc_block_numpy.py" --quiet; }
run_assoc_torch() { time_run "$1" "${torch_env[@]}" "$python" "$base/assoc_block_torch.py" --quiet --threads "$threads"; }

# compare WORKLOAD TITLE: warm-up, RUNS interleaved runs of run_WORKLOAD_{memcap,numpy,torch}, summary
compare() {
    local w=$1 title=$2 side
    echo
    echo "== $title"
    for side in memcap numpy torch; do "run_${w}_$side" "$w.warmup.$side"; done
    printf "%4s  %19s  %19s  %19s  %12s  %12s\n" run "memcap wall (cpu)" "numpy wall (cpu)" "torch wall (cpu)" \
        "numpy/memcap" "torch/memcap"
    for ((i = 1; i <= runs; ++i)); do
        for side in memcap numpy torch; do "run_${w}_$side" "$w.$side"; done
        awk -v i="$i" -v m="$(tail -1 "$tmp/$w.memcap.times")" -v n="$(tail -1 "$tmp/$w.numpy.times")" \
            -v t="$(tail -1 "$tmp/$w.torch.times")" 'BEGIN { split(m, a, " "); split(n, b, " "); split(t, c, " ");
            printf "%4d  %8.3f s (%6.3f)  %8.3f s (%6.3f)  %8.3f s (%6.3f)  %11.2fx  %11.2fx\n",
                i, a[1], a[2], b[1], b[2], c[1], c[2], b[1] / a[1], c[1] / a[1] }'
    done
    "$python" - "$tmp/$w.memcap.times" "$tmp/$w.numpy.times" "$tmp/$w.torch.times" "${bound_cpu:-}" "${bound_wall:-}" <<'EOF'
import statistics as st, sys
m, n, t = ([tuple(map(float, l.split())) for l in open(p)] for p in sys.argv[1:4])
bound_cpu, bound_wall = (float(x) if x else None for x in sys.argv[4:6])
med = lambda xs, k: st.median(x[k] for x in xs)
print()
print(f"median wall time: memcap {med(m, 0):.3f} s, numpy {med(n, 0):.3f} s, torch {med(t, 0):.3f} s")
print(f"median CPU time : memcap {med(m, 1):.3f} s, numpy {med(n, 1):.3f} s, torch {med(t, 1):.3f} s")
print(f"median own total of the peers (without interpreter start and imports): "
      f"numpy {med(n, 2):.3f} s, torch {med(t, 2):.3f} s")
for name, p in (("numpy", n), ("torch", t)):
    wall = [b[0] / a[0] for a, b in zip(m, p)]
    cpu = [b[1] / a[1] for a, b in zip(m, p)]
    print(f"median ratio {name}/memcap (wall, paired runs): {st.median(wall):.2f}x  (range {min(wall):.2f}-{max(wall):.2f})")
    print(f"median ratio {name}/memcap (CPU time)         : {st.median(cpu):.2f}x  (range {min(cpu):.2f}-{max(cpu):.2f})")
if bound_cpu:
    print(f"arithmetic bound (this run): {bound_wall:.4f} s wall on the run's threads, {bound_cpu:.4f} s CPU on one core")
    for name, p in (("memcap", m), ("numpy", n), ("torch", t)):
        wall = [x[0] / bound_wall for x in p]
        cpu = [x[1] / bound_cpu for x in p]
        print(f"median ratio {name}/bound: wall {st.median(wall):.2f}x (range {min(wall):.2f}-{max(wall):.2f}), "
              f"CPU time {st.median(cpu):.2f}x (range {min(cpu):.2f}-{max(cpu):.2f})")
EOF
}

compare reproduce "memcap reproduce  vs  reproduce_numpy.py  vs  reproduce_torch.py"
echo "target: memcap >= 50x faster than numpy on reproduce, i.e. a numpy/memcap ratio >= 50"
bound_cpu="" bound_wall=""
if [[ -x $bound_bin ]]; then
    echo
    echo "== the block's arithmetic bound: $bound_bin ${assoc_args[*]} --threads $threads"
    "$bound_bin" "${assoc_args[@]}" --threads "$threads" | tee "$tmp/bound.txt"
    bound_cpu=$(grep -oE 'bound_cpu_s=[0-9.]+' "$tmp/bound.txt" | cut -d= -f2)
    bound_wall=$(grep -oE 'bound_wall_s=[0-9.]+' "$tmp/bound.txt" | cut -d= -f2)
fi
compare assoc "memcap run ${assoc_args[*]}  vs  assoc_block_numpy.py  vs  assoc_block_torch.py"
echo "target: memcap within 2x of the arithmetic bound, i.e. memcap/bound <= 2 (wall; CPU time beside it)"

# Where the time goes: one more run of each reproduce on ONE thread (OpenBLAS too), so
# that numpy's and torch's wall time per experiment and memcap's CPU time per experiment
# measure the same thing; all three label their experiments alike.
echo
echo "per experiment, one thread each (numpy and torch --timings wall, memcap reproduce --timings CPU):"
rm -rf "$tmp/out"
"$memcap" reproduce --out "$tmp/out" --quiet --threads 1 --timings 2>"$tmp/memcap.timings" >/dev/null
OPENBLAS_NUM_THREADS=1 "$python" "$base/reproduce_numpy.py" --timings >"$tmp/numpy.timings"
OPENBLAS_NUM_THREADS=1 "${torch_env[@]}" "$python" "$base/reproduce_torch.py" --timings --threads 1 >"$tmp/torch.timings"
"$python" - "$tmp/memcap.timings" "$tmp/numpy.timings" "$tmp/torch.timings" <<'EOF'
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
t = table(sys.argv[3], "timings (s)", "total")
ratio = lambda a, b: f"{a / b:7.1f}x" if b > 0 else "      -"
print(f"  {'experiment':45s} {'numpy s':>9s} {'torch s':>9s} {'memcap s':>9s} {'np/memcap':>10s} {'torch/memcap':>13s}")
both = [name for name in n if name in m and name in t]
for name in both:
    print(f"  {name:45s} {n[name]:9.3f} {t[name]:9.3f} {m[name]:9.3f} {ratio(n[name], m[name]):>10s} {ratio(t[name], m[name]):>13s}")
tn, tt, tm = (sum(x[k] for k in both) for x in (n, t, m))
print(f"  {'total (experiments in all three)':45s} {tn:9.3f} {tt:9.3f} {tm:9.3f} {ratio(tn, tm):>10s} {ratio(tt, tm):>13s}")
EOF
