#!/usr/bin/python3
"""The time of one cell against the budget, for every memory: a timed script (not a test).

One cell is what a sweep runs per (memory, task, budget, n, seed): reset, write n = 256 random
unit key-value pairs of width d = 64, read 32 queries, score them (assoc_recall, each memory's
own read). Every memory fills its budget at that width (the grids widen their features, HRR
its trace, MesaNet and Based their maps, the networks their hidden layers); the cache holds
B/128 of the pairs (FIFO), all 256 from 32768 floats on. Each time is the CPU time of
`memcap run --threads 1` for k + 1 seeds minus that for 1 seed, over k (start-up and parsing
cancel), k chosen so the run takes about --target seconds; so it is CPU time, which a second
load on the machine changes less than wall time. The growth column is the log-log slope of the
time between the two largest budgets measured: 1 where the cost grows as the budget. The
arithmetic column, and the memories measured by default, are the entries that state their
`cost_growth` in memcap's table (`memcap list --json`).

usage: /usr/bin/python3 scripts/cell_costs.py build/memcap [--budgets 256,1024,...] [--memories a,b]
       [--target 0.5] [--limit 60] [--out reports/bench/cell_costs.md]
The table is printed and, with --out, written (atomically). A memory whose cell exceeds --limit
seconds at a budget is not run at larger budgets (shown as '>limit').
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

def arithmetic(memcap):
    """Each memory's arithmetic of one cell against the budget (its entry's cost_growth in
    `memcap list --json`), for the memories that state one, in the catalog's order."""
    out = subprocess.run([memcap, "list", "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("cell_costs.py: '%s list --json' failed: %s" % (memcap, out.stderr.strip()))
    return {m["name"]: m["cost_growth"] for m in json.loads(out.stdout)["memories"] if m.get("cost_growth")}


def cpu_of(cmd):
    """CPU seconds (user + system) of one child process; None when it fails."""
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(cmd + ["-o", os.path.join(tmp, "out.csv")], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        err = proc.stderr.read().decode(errors="replace").strip()
        proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        return None, err.splitlines()[-1] if err else "exit %d" % os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, ""


def cell_seconds(memcap, memory, budget, target, limit):
    base = [memcap, "run", "-m", memory, "-t", "assoc_recall", "--budget", str(budget), "--d", "64",
            "--n", "256", "--threads", "1", "-q"]
    one, err = cpu_of(base + ["--seeds", "1"])
    if one is None:
        return None, err
    if one > limit:
        return one, ""
    k = max(1, min(200, int(math.ceil(target / max(one, 1e-3)))))
    more, err = cpu_of(base + ["--seeds", str(1 + k)])
    if more is None:
        return None, err
    return max(more - one, 0.0) / k, ""


def fmt(t):
    if t is None:
        return "—"
    if t < 1e-3:
        return "%.0f µs" % (t * 1e6)
    if t < 1:
        return "%.1f ms" % (t * 1e3)
    return "%.2f s" % t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("memcap")
    ap.add_argument("--budgets", default="256,1024,4096,16384,65536,262144,1048576")
    ap.add_argument("--memories", help="comma-separated (default: every memory whose entry states its cost growth)")
    ap.add_argument("--target", type=float, default=0.5, help="seconds of CPU per timed run (default 0.5)")
    ap.add_argument("--limit", type=float, default=60, help="a cell above this many seconds ends the memory's row")
    ap.add_argument("--out", help="also write the table here")
    a = ap.parse_args()
    try:
        budgets = [int(b) for b in a.budgets.split(",")]
    except ValueError:
        sys.exit("cell_costs.py: --budgets takes integers separated by commas, got '%s'" % a.budgets)
    if any(b <= 0 for b in budgets):
        sys.exit("cell_costs.py: budgets must be positive, got '%s'" % a.budgets)
    if not (a.target > 0 and a.limit > 0):
        sys.exit("cell_costs.py: --target and --limit must be positive")
    if not os.access(a.memcap, os.X_OK):
        sys.exit("cell_costs.py: no memcap binary at '%s'" % a.memcap)
    growth_of = arithmetic(a.memcap)
    memories = a.memories.split(",") if a.memories else list(growth_of)
    lines = ["| memory | " + " | ".join("%d" % b for b in budgets) + " | growth | arithmetic |",
             "|---|" + "---:|" * len(budgets) + "---:|---|"]
    notes = []
    for m in memories:
        times, stop = [], False
        for b in budgets:
            if stop:
                times.append(None)
                continue
            t, err = cell_seconds(a.memcap, m, b, a.target, a.limit)
            if t is None:
                notes.append("%s at %d floats: %s" % (m, b, err))
            elif t > a.limit:
                stop = True
            times.append(t)
            print("  %s %d: %s" % (m, b, fmt(t)), file=sys.stderr, flush=True)
        done = [(b, t) for b, t in zip(budgets, times) if t is not None and t <= a.limit]
        growth = ""
        if len(done) >= 2 and done[-2][1] > 0 and done[-1][1] > 0:
            growth = "%.2f" % (math.log(done[-1][1] / done[-2][1]) / math.log(done[-1][0] / done[-2][0]))
        cells = [(">%gs" % a.limit if t is not None and t > a.limit else fmt(t)) for t in times]
        lines.append("| %s | %s | %s | %s |" % (m, " | ".join(cells), growth, growth_of.get(m, "")))
    text = "\n".join(lines) + "\n" + ("\n" + "\n".join("- " + n for n in notes) + "\n" if notes else "")
    print(text, end="")
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
