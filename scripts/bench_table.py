#!/usr/bin/env python3
"""Prints a markdown table of a memcap_bench JSON file (scripts/bench.sh).

One row per kernel: the medians over repetitions of items/s, GFLOP/s, GB/s
and the fraction of the roofline bound, which the binary computed against the
ceilings it measured in the same run (in the JSON context)."""
import json
import sys


def main(path):
    with open(path) as f:
        doc = json.load(f)
    ctx = doc["context"]
    rows = [b for b in doc["benchmarks"] if b.get("aggregate_name", "median") == "median"
            and b.get("run_type") in ("aggregate", "iteration")]
    seen = {}
    for b in rows:  # with aggregates: the median rows; without: the last repetition
        seen[b.get("run_name", b["name"])] = b
    print(f"Ceilings measured in this run (single thread, {ctx.get('isa', '?')}): "
          f"SGEMM {float(ctx['peak_sgemm_gflops']):.1f} GFLOP/s, "
          f"triad {float(ctx['triad_gbps']):.1f} GB/s; "
          f"host {ctx.get('host_name', '?')}, {ctx.get('date', '?')}.")
    print()
    print("| kernel | budget_floats | n | time/call | items/s | GFLOP/s | GB/s | FLOP/byte | roofline_frac |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, b in seen.items():
        parts = name.split("/")
        if parts[0] == "ceiling":
            rate = b.get("FLOP", 0) * 1e-9 or b.get("bytes", 0) * 1e-9
            unit = "GFLOP/s" if "FLOP" in b else "GB/s"
            print(f"| {name} | | | {b['cpu_time'] / 1e6:.2f} ms | | "
                  + (f"{rate:.1f} | |" if unit == "GFLOP/s" else f"| {rate:.1f} |") + " | |")
            continue
        args = dict(p.split(":") for p in parts[2:] if ":" in p)
        unit = b["time_unit"]
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]
        t = b["cpu_time"] * scale
        t_text = f"{t * 1e6:.1f} µs" if t < 1e-3 else f"{t * 1e3:.2f} ms"
        flops, byts = b.get("FLOP"), b.get("bytes")
        intensity = (b["flops_per_item"] / b["bytes_per_item"]) if b.get("bytes_per_item") else None
        frac = b.get("roofline_frac")
        fmt = lambda v, f: "" if v is None else format(v, f)
        print(f"| {parts[0]}/{parts[1]} | {args.get('budget_floats', '')} | {args.get('n', '')} | {t_text} | "
              f"{b['items']:.3g} | {fmt(flops and flops * 1e-9, '.2f')} | {fmt(byts and byts * 1e-9, '.2f')} | "
              f"{fmt(intensity, '.1f')} | {fmt(frac, '.2f')} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "reports/bench/bench.json")
