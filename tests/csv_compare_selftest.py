#!/usr/bin/env python3
"""Feeds tests/csv_compare.py deliberately altered copies of the golden files and
checks each real change fails and each rounding-sized one passes (ctest
golden_compare_detects_changes). usage: csv_compare_selftest.py [GOLDEN_DIR]"""
import csv
import io
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
golden_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "golden")
tool = os.path.join(here, "csv_compare.py")


def load(name):
    with open(os.path.join(golden_dir, name), newline="") as f:
        return list(csv.reader(f))


def dump(rows):
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def fmt(x):
    return "%.6g" % x


results = load("smoke.csv")
summary = load("smoke_summary.csv")
hr, hs = {n: i for i, n in enumerate(results[0])}, {n: i for i, n in enumerate(summary[0])}
# rows to alter: ones with a measured distance and 0 < correct < queries (room to flip either way)
flippable = [i for i, r in enumerate(results) if i and r[hr["target_dist_mean"]] and r[hr["status"]] == "ok"
             and 0 < int(r[hr["correct"]]) < int(r[hr["queries"]])]
assert len(flippable) >= 6, "golden smoke.csv has too few rows to alter"
row = flippable[0]
probe_row = next(i for i, r in enumerate(results) if i and not r[hr["target_dist_mean"]] and r[hr["status"]] == "ok"
                 and 0 < int(r[hr["correct"]]) < int(r[hr["queries"]]))


def results_with(changes, drop=None, header=None):
    rows = [list(r) for r in results]
    for (i, name), value in changes.items():
        rows[i][hr[name]] = value
    if drop is not None:
        del rows[drop]
    if header is not None:
        rows[0] = header
    return dump(rows)


def flip(i, by=1, dist=None):
    r = results[i]
    c, q = int(r[hr["correct"]]) + by, int(r[hr["queries"]])
    frac = repr(c / q)  # memcap prints the shortest round-trip form, without a trailing ".0"
    ch = {(i, "correct"): str(c), (i, "accuracy_frac"): frac[:-2] if frac.endswith(".0") else frac}
    if dist is not None:
        ch[(i, "target_dist_mean")] = dist
    return ch


def scaled(i, name, factor, table=results, cols=hr):
    return fmt(float(table[i][cols[name]]) * factor)


sum_row = next(i for i, r in enumerate(summary) if i and r[hs["accuracy_sd_frac"]] not in ("", "0"))
md_path = os.path.join(golden_dir, "smoke.md")
with open(md_path) as f:
    md = f.read()
md_line = next(line for line in md.splitlines() if line.startswith("| `") and line.rstrip().endswith(" |"))
md_cell = md_line.rstrip(" |").rsplit("| ", 1)[1]
md_changed = md.replace(md_line, md_line.replace(f"| {md_cell} |", f"| {float(md_cell) + 0.1:.1f} |"), 1)

dist = float(results[row][hr["target_dist_mean"]])
cases = [  # (description, file name, content, csv_compare options, expected exit status)
    ("unchanged results", "smoke.csv", dump(results), [], 0),
    ("distance changed by 3e-5 of its scale", "smoke.csv",
     results_with({(row, "target_dist_mean"): fmt(dist + 3e-5 * max(1.0, dist))}), [], 0),
    ("distance changed by 3e-4 of its scale", "smoke.csv",
     results_with({(row, "target_dist_mean"): fmt(dist + 3e-4 * max(1.0, dist))}), [], 1),
    ("one tie flip, none allowed", "smoke.csv", results_with(flip(row)), [], 1),
    ("one tie flip, one allowed", "smoke.csv", results_with(flip(row)), ["--tie-flips", "1"], 0),
    ("correct +1 with accuracy_frac left as it was", "smoke.csv",
     results_with({(row, "correct"): str(int(results[row][hr["correct"]]) + 1)}), ["--tie-flips", "4"], 1),
    ("correct +1 with the distance moved too", "smoke.csv",
     results_with(flip(row, 1, fmt(dist * 1.01 + 0.01))), ["--tie-flips", "4"], 1),
    ("correct +2 in one row (two flips), one allowed", "smoke.csv", results_with(flip(row, 2)), ["--tie-flips", "1"], 1),
    ("correct +2 in one row (two flips), two allowed", "smoke.csv", results_with(flip(row, 2)), ["--tie-flips", "2"], 0),
    ("five tie flips, four allowed", "smoke.csv",
     results_with({k: v for i in flippable[:5] for k, v in flip(i).items()}), ["--tie-flips", "4"], 1),
    ("correct +1 in a probe row (no distance to show the reads unchanged)", "smoke.csv",
     results_with(flip(probe_row)), ["--tie-flips", "4"], 1),
    ("queries changed", "smoke.csv", results_with({(row, "queries"): str(int(results[row][hr["queries"]]) + 1)}), [], 1),
    ("memory spec changed", "smoke.csv", results_with({(row, "memory_spec"): results[row][hr["memory_spec"]] + "x"}), [], 1),
    ("status changed", "smoke.csv", results_with({(row, "status"): "error"}), [], 1),
    ("state_floats changed", "smoke.csv",
     results_with({(row, "state_floats"): str(int(results[row][hr["state_floats"]]) + 1)}), [], 1),
    ("a row missing", "smoke.csv", results_with({}, drop=row), [], 1),
    ("a column renamed", "smoke.csv", results_with({}, header=results[0][:-1] + ["msg"]), [], 1),
    ("summary unchanged", "smoke_summary.csv", dump(summary), [], 0),
    ("summary sd changed by 1e-5 relative", "smoke_summary.csv",
     dump([r if i != sum_row else r[:hs["accuracy_sd_frac"]] + [scaled(i, "accuracy_sd_frac", 1.00001, summary, hs)]
           + r[hs["accuracy_sd_frac"] + 1:] for i, r in enumerate(summary)]), [], 0),
    ("summary sd changed by 1e-3 relative", "smoke_summary.csv",
     dump([r if i != sum_row else r[:hs["accuracy_sd_frac"]] + [scaled(i, "accuracy_sd_frac", 1.001, summary, hs)]
           + r[hs["accuracy_sd_frac"] + 1:] for i, r in enumerate(summary)]), [], 1),
    ("summary mean changed", "smoke_summary.csv",
     dump([r if i != sum_row else r[:hs["accuracy_mean_frac"]] + [fmt(float(r[hs["accuracy_mean_frac"]]) + 1e-3)]
           + r[hs["accuracy_mean_frac"] + 1:] for i, r in enumerate(summary)]), [], 1),
    ("markdown unchanged", "smoke.md", md, [], 0),
    ("markdown cell changed by 0.1", "smoke.md", md_changed, [], 1),
]

failures = 0
with tempfile.TemporaryDirectory() as tmp:
    for i, (what, name, content, options, expect) in enumerate(cases):
        path = os.path.join(tmp, f"{i}-{name}")
        with open(path, "w") as f:
            f.write(content)
        got = subprocess.run([sys.executable, tool, os.path.join(golden_dir, name), path] + options,
                             capture_output=True, text=True)
        ok = got.returncode == expect
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}: exit {got.returncode} (expected {expect})")
        if not ok:
            print(got.stdout + got.stderr)
sys.exit(1 if failures else 0)
