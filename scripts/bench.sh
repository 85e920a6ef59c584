#!/usr/bin/env bash
# Runs the micro-benchmarks (bench/bench_memories.cpp) and writes
#   reports/bench/bench.json   Google Benchmark's JSON (context holds the ceilings,
#                              the ISA they and the kernels were compiled for, the CPU)
#   reports/bench/bench.md     a readable table: medians over repetitions
#   reports/bench/bound.md     the fraction of the roofline bound of the targeted
#                              kernels (softmax, linear, delta, hrr; budgets >= 4096),
#                              also printed last; the target is >= 0.5
# Builds first if needed (scripts/setup.sh, into $MEMCAP_BUILD_DIR or build/). The
# build's ISA is the one measured: native by default, baseline x86-64 for a build
# configured with -DMEMCAP_PORTABLE=ON (e.g. MEMCAP_BUILD_DIR=build-portable
# MEMCAP_CMAKE_ARGS=-DMEMCAP_PORTABLE=ON).
# usage: scripts/bench.sh [out-dir] [extra benchmark flags...]
#   e.g. scripts/bench.sh reports/bench --benchmark_filter='^(softmax|hrr)/'
# Environment: MEMCAP_BENCH_REPS (default 3), MEMCAP_BENCH_MIN_TIME (seconds, default 0.2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MEMCAP_BUILD_DIR:-$root/build}
out=${1:-$root/reports/bench}
shift || true
bench=$build/bench/memcap_bench
[[ -x $bench ]] || MEMCAP_BUILD_DIR=$build bash "$root/scripts/setup.sh"
cmake --build "$build" -j "${MEMCAP_JOBS:-$(nproc)}" --target memcap_bench >/dev/null
mkdir -p "$out"
"$bench" --benchmark_repetitions="${MEMCAP_BENCH_REPS:-3}" --benchmark_report_aggregates_only=true \
    --benchmark_min_time="${MEMCAP_BENCH_MIN_TIME:-0.2}" \
    --benchmark_out="$out/bench.json" --benchmark_out_format=json "$@" >&2
/usr/bin/python3 "$root/scripts/bench_table.py" "$out/bench.json" | tee "$out/bench.md"
echo
/usr/bin/python3 - "$out/bench.json" <<'PY' | tee "$out/bound.md"
import json, sys
doc = json.load(open(sys.argv[1]))
ctx = doc["context"]
frac = {}
for b in doc["benchmarks"]:
    if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
        continue
    parts = b.get("run_name", b["name"]).split("/")
    args = dict(p.split(":") for p in parts[2:] if ":" in p)
    if parts[0] in ("softmax", "linear", "delta", "hrr") and int(args.get("budget_floats", 0)) >= 4096:
        if "roofline_frac" in b:
            frac[(parts[0], parts[1], int(args["budget_floats"]), int(args["n"]))] = b["roofline_frac"]
ns = sorted({k[3] for k in frac})
print(f"Fraction of the roofline bound (medians; target >= 0.5), {ctx.get('isa', '?')}, CPU {ctx.get('cpu_model', '?')}; "
      f"ceilings in this run: SGEMM {float(ctx['peak_sgemm_gflops']):.1f} GFLOP/s, triad {float(ctx['triad_gbps']):.1f} GB/s")
print()
print("| kernel | budget | " + " | ".join(f"n = {n}" for n in ns) + " |")
print("|---|---:|" + "---:|" * len(ns))
below = []
for key in sorted({k[:3] for k in frac}, key=lambda k: (["softmax", "linear", "delta", "hrr"].index(k[0]), k[1] != "write_batch", k[2])):
    cells = []
    for n in ns:
        f = frac.get(key + (n,))
        cells.append("" if f is None else f"{f:.2f}" + (" *" if f < 0.5 else ""))
        if f is not None and f < 0.5:
            below.append(f"{key[0]}/{key[1]} B={key[2]} n={n} ({f:.2f})")
    print(f"| {key[0]}/{key[1]} | {key[2]} | " + " | ".join(cells) + " |")
print()
print("Below 0.5 (*): " + (", ".join(below) if below else "none"))
PY
