#!/usr/bin/python3
"""The capacity table of scripts/sweeps/field.ini: per memory, task, readout and budget, the crossing
n* of accuracy 0.5, 0.9 and 0.99 with its 95% bootstrap interval over the scored seeds (the
report's rule, scripts/memcap_report/crossing.py), as a Markdown table on stdout.

usage: /usr/bin/python3 scripts/sweeps/field_table.py results/field/field.csv
       (it writes results/field/field_summary.csv with `memcap aggregate` when it is not there;
       MEMCAP names the binary, default build/memcap)"""
import csv
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from memcap_report import capacity, common, crossing  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    per_seed = argv[1]
    summary = per_seed[:-len(".csv")] + "_summary.csv" if per_seed.endswith(".csv") else per_seed + "_summary.csv"
    if not os.path.exists(summary):
        subprocess.run([os.environ.get("MEMCAP", "build/memcap"), "aggregate", per_seed, "--out", summary], check=True)
    common.read_catalog(os.path.join(ROOT, "reports"), required=True)  # the tasks' capacity axes
    crossing.load_seeds(per_seed)
    with open(summary, newline="") as f:
        rows = list(csv.DictReader(f))
    table, _ = capacity.capacity_rows(rows, "frontier")
    print("| memory | task | readout | budget | n* at 0.5 | n* at 0.9 | n* at 0.99 |")
    print("|---|---|---|---|---|---|---|")
    for r in table:
        est = r["nstar"] or {}
        cells = [crossing.fmt_est(est[t]) if t in est else "–" for t in crossing.THRESHOLDS]
        print("| `%s` | %s | %s | %d | %s |" % (r["memory_spec"], r["task"], r["readout"], r["budget_floats"], " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
