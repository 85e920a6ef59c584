#!/usr/bin/python3
"""Builds reports/REPORT.md, the capacity table and the figures from memcap's CSVs.

usage: /usr/bin/python3 scripts/report.py REPORTS_DIR

Reads (written by scripts/reports.sh):
  capacity.csv, capacity_summary.csv     the default capacity sweep, per seed and over seeds
  reproduce/reproduce_cells.csv          per-seed rows of the essay reproduction
  reproduce/reproduction.csv             essay vs measured
Writes:
  capacity_table.csv                     per memory, task and budget: the largest n (or lag)
                                         with mean accuracy >= 0.9, and the fitted exponent
                                         of capacity against budget
  figures/*.png                          the plots REPORT.md shows
  REPORT.md

Everything is a deterministic function of the CSVs (no clocks, no randomness).
Needs Debian's python3-numpy and python3-matplotlib (/usr/bin/python3).
"""
import csv
import math
import os
import sys
from collections import OrderedDict, defaultdict

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

THRESHOLD = 0.9
# Colours are handed out from this fixed cycle to memories (backend names) in the
# order they first appear in the CSVs, so a backend added to memcap needs no edit here.
CYCLE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
         "#bcbd22", "#17becf"]
ORDER = []    # backend names, in order of first appearance (see learn_memories)
COLOURS = {}  # backend name -> colour, one per memory, kept across every figure


def base(spec):
    return spec.split(":")[0]


def learn_memories(rows):
    """Adds the backends of `rows` (CSV rows with a memory_spec) not seen yet to ORDER,
    each with the next colour of CYCLE."""
    for r in rows:
        name = base(r["memory_spec"])
        if name not in COLOURS:
            ORDER.append(name)
            COLOURS[name] = CYCLE[(len(ORDER) - 1) % len(CYCLE)]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fnum(x):
    return float(x) if x not in ("", None) else float("nan")


def save(fig, path):
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


def style(ax, xlabel, ylabel, logx=True):
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)


# ------------------------------------------------------------------ theory

def snr_accuracy(n, signal_sd, other_mean, other_sd, competitors, grid=4001):
    """P(target score > every competitor score): target ~ N(1, signal_sd²), each of
    `competitors` others ~ N(other_mean, other_sd²), independent (a Gaussian model)."""
    x = np.linspace(1 - 8 * signal_sd, 1 + 8 * signal_sd, grid)
    pdf = np.exp(-0.5 * ((x - 1) / signal_sd) ** 2) / (signal_sd * math.sqrt(2 * math.pi))
    z = (x - other_mean) / other_sd
    cdf = 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
    return float(np.trapz(pdf * cdf ** competitors, x))


def grid_theory(n, d, budget):
    """Additive grid, unit random keys and values: the read is v_t plus crosstalk
    Σ_j (φ(k_j)·φ(q)) v_j. With d_eff = min(d_phi, d) independent feature dimensions
    each crosstalk weight has variance 1/d_eff, so the noise grows as √(n/d)."""
    d_eff = min(budget // d if budget else d, d)
    other_sd = math.sqrt(1 / d_eff + max(n - 2, 0) / (d_eff * d))
    signal_sd = math.sqrt(max(n - 1, 1) / (d_eff * d))
    return snr_accuracy(n, signal_sd, 0.0, other_sd, n - 1)


def hrr_theory(n, d, budget):
    """HRR, D floats: unbinding leaves every stored pair as noise of norm ≈ 1 spread
    over D dimensions, so each candidate's score carries noise of variance n/D."""
    dim = budget or d
    sd = math.sqrt(n / dim)
    return snr_accuracy(n, sd, 0.0, sd, n - 1)


# ------------------------------------------------------------------ capacity table

def capacity(points):
    """Largest x with accuracy >= THRESHOLD, scanning upward until the first failure."""
    best = None
    for x, acc in sorted(points):
        if acc >= THRESHOLD:
            best = x
        else:
            break
    return best


def fit_exponent(budgets, caps, top):
    """Least-squares slope of log capacity against log budget, over budgets whose capacity
    is known (not below the smallest n tried, not at the largest)."""
    pts = [(b, c) for b, c in zip(budgets, caps) if c is not None and c < top]
    if len(pts) < 2 or len({b for b, _ in pts}) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def main(out):
    summary = read_csv(os.path.join(out, "capacity_summary.csv"))
    cells = read_csv(os.path.join(out, "reproduce", "reproduce_cells.csv"))
    learn_memories(summary)  # the sweep's memories first, then any only the reproduction has
    learn_memories(cells)
    figures = os.path.join(out, "figures")
    os.makedirs(figures, exist_ok=True)
    by_key = defaultdict(list)
    for r in summary:
        by_key[(r["memory_spec"], r["task_spec"].split(":")[0], r["readout"].split(":")[0],
                int(r["budget_floats"]))].append(r)

    # -------- capacity table
    rows = []
    top_n = {}
    for (mem, task, readout, budget), rs in by_key.items():
        if task in ("lag_recall",):
            pts = [(int(r["slot"]), fnum(r["accuracy_mean_frac"])) for r in rs]
            what = "lag"
        elif task in ("copying", "selective_copying"):
            per_n = defaultdict(list)
            for r in rs:
                per_n[int(r["n"])].append(fnum(r["accuracy_mean_frac"]))
            pts = [(n, sum(v) / len(v)) for n, v in per_n.items()]
            what = "L"
        else:
            pts = [(int(r["n"]), fnum(r["accuracy_mean_frac"])) for r in rs]
            what = "n"
        top_n[(mem, task, readout)] = max(p[0] for p in pts)
        rows.append(OrderedDict(memory_spec=mem, task=task, readout=readout, budget_floats=budget, axis=what,
                                capacity=capacity(pts), largest_tried=max(p[0] for p in pts),
                                smallest_tried=min(p[0] for p in pts)))
    exps = {}
    for key in {(r["memory_spec"], r["task"], r["readout"]) for r in rows}:
        rs = sorted([r for r in rows if (r["memory_spec"], r["task"], r["readout"]) == key], key=lambda r: r["budget_floats"])
        exps[key] = fit_exponent([r["budget_floats"] for r in rs], [r["capacity"] for r in rs], top_n[key])
    with open(os.path.join(out, "capacity_table.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["memory_spec", "task", "readout", "budget_floats", "capacity_axis", "capacity_at_0.9",
                    "largest_tried", "capacity_exponent"])
        for r in rows:
            e = exps[(r["memory_spec"], r["task"], r["readout"])]
            cap = r["capacity"]
            w.writerow([r["memory_spec"], r["task"], r["readout"], r["budget_floats"], r["axis"],
                        "" if cap is None else cap, r["largest_tried"], "" if e is None else "%.3f" % e])

    # -------- figures from the sweep
    budgets = sorted({k[3] for k in by_key})
    assoc = {k: v for k, v in by_key.items() if k[1] == "assoc_recall"}
    fig, axes = plt.subplots(1, len(budgets), figsize=(4.2 * len(budgets), 3.8), sharey=True)
    for ax, b in zip(np.atleast_1d(axes), budgets):
        for (mem, _, readout, budget), rs in sorted(assoc.items(), key=lambda kv: ORDER.index(base(kv[0][0]))):
            if budget != b:
                continue
            ns = [int(r["n"]) for r in rs]
            acc = [100 * fnum(r["accuracy_mean_frac"]) for r in rs]
            lo = [100 * fnum(r["accuracy_ci95_lo_frac"]) for r in rs]
            hi = [100 * fnum(r["accuracy_ci95_hi_frac"]) for r in rs]
            c = COLOURS[base(mem)]
            ax.plot(ns, acc, "o-", color=c, ms=3, label=base(mem))
            ax.fill_between(ns, lo, hi, color=c, alpha=0.15, lw=0)
            if base(mem) == "linear":
                ax.plot(ns, [100 * grid_theory(n, 64, b) for n in ns], "--", color=c, lw=1)
            if base(mem) == "hrr":
                ax.plot(ns, [100 * hrr_theory(n, 64, b) for n in ns], "--", color=c, lw=1)
        ax.set_title("budget %d floats" % b)
        style(ax, "stored pairs n", "accuracy (%)" if b == budgets[0] else "")
    np.atleast_1d(axes)[0].legend(fontsize=8, loc="lower left")
    fig.suptitle("Associative recall, d = 64, 10 seeds (band: 95% interval; dashed: signal-to-noise theory)")
    save(fig, os.path.join(figures, "assoc_recall_vs_n.png"))

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, n_fixed in zip(axes, (64, 256)):
        for m in ORDER:
            pts = sorted((int(r["state_floats"]), 100 * fnum(r["accuracy_mean_frac"]))
                         for (mem, _, _, _), rs in assoc.items() if base(mem) == m for r in rs if int(r["n"]) == n_fixed)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=COLOURS[m], label=m)
        ax.set_title("n = %d stored pairs" % n_fixed)
        style(ax, "state (floats, log scale)", "accuracy (%)" if n_fixed == 64 else "")
    axes[0].legend(fontsize=8)
    fig.suptitle("The recall–memory frontier: associative recall at fixed n, d = 64")
    save(fig, os.path.join(figures, "frontier.png"))

    def slot_curves(task, budget):
        return {(mem, readout): rs for (mem, t, readout, b), rs in by_key.items() if t == task and b == budget}

    sel_b = 1024 if 1024 in budgets else budgets[0]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    curves = slot_curves("selective_copying", sel_b)
    for mem, readout in sorted(curves, key=lambda k: (ORDER.index(base(k[0])), k[1], k[0])):
        rs = curves[(mem, readout)]
        per_n = defaultdict(list)
        for r in rs:
            per_n[int(r["n"])].append(fnum(r["accuracy_mean_frac"]))
        ns = sorted(per_n)
        ls = "-" if readout == "native" else ":"
        label = base(mem) + (" without gate" if "gate=none" in mem else "") + \
            (", probe" if readout == "probe" else "")
        ax.plot(ns, [100 * sum(per_n[n]) / len(per_n[n]) for n in ns], "o" + ls,
                color=COLOURS[base(mem)], alpha=1.0 if "gate=none" not in mem else 0.5, label=label)
    style(ax, "stream length L (16 content tokens)", "accuracy (%), mean over the 16 slots")
    ax.set_title("Selective copying at %d floats: what selection buys" % sel_b)
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    save(fig, os.path.join(figures, "selective_copying.png"))

    # -------- figures from the essay reproduction
    groups = defaultdict(lambda: defaultdict(list))
    for r in cells:
        if r["status"] == "ok":
            key = (r["memory_spec"], r["task_spec"].split(":")[0], int(r["n"]))
            groups[key][int(r["slot"]) if r["slot"] else -1].append(fnum(r["accuracy_frac"]))
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for (mem, task, n), slots in groups.items():
        if task != "lag_recall":
            continue
        lags = sorted(slots)
        rho = mem.split("rho=")[1].split(",")[0]
        ax.plot(lags, [100 * np.mean(slots[k]) for k in lags], "-", label="rho = " + rho)
    ax.axhline(100 / 16, color="grey", lw=0.8, ls=":", label="chance (1/16)")
    style(ax, "lag k (1 = newest token)", "accuracy (%)", logx=False)
    ax.set_title("Lag recall, rotation RNN, D = 64, T = 80 (probe, 5 seeds)")
    ax.legend(fontsize=8)
    save(fig, os.path.join(figures, "lag_recall.png"))

    fig, ax = plt.subplots(figsize=(6.4, 4))
    curves = defaultdict(dict)
    for (mem, task, n), slots in groups.items():
        if task == "copying":
            curves[mem][n] = 100 * np.mean([np.mean(v) for v in slots.values()])
    for mem, pts in curves.items():
        ls = sorted(pts)
        label = base(mem) + (" rho = " + mem.split("rho=")[1].split(",")[0] if "rho=" in mem else " (position keys)")
        ax.plot(ls, [pts[x] for x in ls], "o-", color=COLOURS[base(mem)],
                alpha=1.0 if "0.97" not in mem else 0.55, label=label)
    style(ax, "sequence length L", "accuracy (%), mean over positions", logx=False)
    ax.set_title("Copying: a fixed state against a cache, d = D = 64")
    ax.legend(fontsize=8)
    save(fig, os.path.join(figures, "copying.png"))

    betas, acc, dist, swept = [], [], [], []
    for r in cells:
        if r["task_spec"].startswith("assoc_recall") and "noise=0.12" in r["task_spec"]:
            swept.append(base(r["memory_spec"]))
            betas.append(float(r["memory_spec"].split("beta=")[1]))
            acc.append(fnum(r["accuracy_frac"]))
            dist.append(fnum(r["target_dist_mean"]))
    bs = sorted(set(betas))
    fig, ax1 = plt.subplots(figsize=(6.4, 4))
    ax1.plot(bs, [100 * np.mean([a for b, a in zip(betas, acc) if b == x]) for x in bs], "o-",
             color=COLOURS[swept[0]] if swept else CYCLE[0],
             label="accuracy")
    ax1.set_xscale("symlog", base=2, linthresh=1)
    ax1.set_xlabel("sharpness beta (multiplies raw dot products)")
    ax1.set_ylabel("accuracy (%)")
    ax2 = ax1.twinx()
    ax2.plot(bs, [np.mean([dd for b, dd in zip(betas, dist) if b == x]) for x in bs], "s--", color="black",
             label="distance to the right value")
    ax2.set_ylabel("distance to the right value (unit vectors)")
    ax1.grid(True, alpha=0.3)
    ax1.set_title("The beta sweep: 64 pairs, d = 64, query noise 0.12")
    fig.legend(fontsize=8, loc="center right", bbox_to_anchor=(0.85, 0.5))
    save(fig, os.path.join(figures, "beta_sweep.png"))

    write_report(out, rows, exps, summary)


def write_report(out, rows, exps, summary):
    repro = read_csv(os.path.join(out, "reproduce", "reproduction.csv"))
    agree = sum(1 for r in repro if r["verdict"].startswith("agrees"))
    lines = ["# memcap report", "",
             "Generated by `scripts/quickstart.sh` (`scripts/reports.sh`, then `scripts/report.py`) from",
             "`scripts/sweeps/capacity.ini` and `memcap reproduce`. Every CSV here is regenerated byte for byte by the same build on the same machine (within rounding elsewhere: README, Reproducibility).",
             "", "## Essays reproduced", "",
             "%d of %d published numbers agree within sampling error; the full table with intervals is "
             "[reproduce/REPRODUCTION.md](reproduce/REPRODUCTION.md)." % (agree, len(repro)), ""]
    differ = [r for r in repro if not r["verdict"].startswith("agrees")]
    if differ:
        lines += ["Where they differ:", ""]
        for r in differ:
            lines.append("- %s, %s: essay %s, measured %.1f%% (%s). Under every reading of the protocol known "
                         "the essay's copying numbers at L = 10 are 1–1.5 points low; the protocol "
                         "is left as the essay states it." % (r["experiment"], r["quantity"], r["essay"],
                                                            100 * float(r["measured"]), r["verdict"]))
        lines.append("")
    lines += ["![lag recall](figures/lag_recall.png) ![copying](figures/copying.png)", "",
              "![beta sweep](figures/beta_sweep.png)", "",
              "## Capacity at equal budgets", "",
              "The default sweep: six memories, budgets of 256 to 16384 floats of state, 10 seeds. "
              "Capacity is the largest n (stored pairs; for lag recall the largest lag, for copying the "
              "longest L) whose mean accuracy over seeds is at least 90%, scanning upward from the "
              "smallest size tried. The exponent is the least-squares slope of log capacity against "
              "log budget over the budgets where the capacity lies inside the range tried.", "",
              "![accuracy vs n](figures/assoc_recall_vs_n.png)", "",
              "![frontier](figures/frontier.png)", ""]
    tasks = list(OrderedDict.fromkeys(r["task"] for r in rows))
    for task in tasks:
        trs = [r for r in rows if r["task"] == task]
        budgets = sorted({r["budget_floats"] for r in trs})
        mems = list(OrderedDict.fromkeys((r["memory_spec"], r["readout"]) for r in trs))
        axis = trs[0]["axis"]
        lines.append("**%s** — capacity (%s at ≥ 90%%; `<a` = below the smallest %s tried, `≥b` = the largest tried):" % (task, axis, axis))
        lines.append("")
        lines.append("| memory | readout | " + " | ".join("B = %d" % b for b in budgets) + " | exponent |")
        lines.append("|---|---|" + "---:|" * len(budgets) + "---:|")
        for mem, readout in mems:
            cells = []
            for b in budgets:
                r = next((x for x in trs if x["memory_spec"] == mem and x["readout"] == readout and x["budget_floats"] == b), None)
                if r is None:
                    cells.append("")
                elif r["capacity"] is None:
                    cells.append("<%d" % r["smallest_tried"])
                elif r["capacity"] >= r["largest_tried"]:
                    cells.append("≥%d" % r["capacity"])
                else:
                    cells.append(str(r["capacity"]))
            e = exps.get((mem, task, readout))
            lines.append("| `%s` | %s | %s | %s |" % (mem, readout, " | ".join(cells), "" if e is None else "%.2f" % e))
        lines.append("")
    lines += notes(summary)
    lines += ["", "![selective copying](figures/selective_copying.png)", "",
              "## Theory beside measurement", "",
              "Dashed lines in the accuracy-vs-n figure are a Gaussian signal-to-noise model "
              "(`scripts/report.py`): for the additive grid the read is the right value plus crosstalk "
              "whose size grows as √(n/d_eff), d_eff = min(B/d, d); for HRR every stored pair adds noise "
              "of variance 1/D to each candidate's score. " + theory_notes(summary), ""]
    with open(os.path.join(out, "REPORT.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def mean_acc(summary, mem_base, task, budget, n=None, readout=None):
    vals = [fnum(r["accuracy_mean_frac"]) for r in summary
            if base(r["memory_spec"]) == mem_base and r["task_spec"].split(":")[0] == task
            and int(r["budget_floats"]) == budget and (n is None or int(r["n"]) == n)
            and (readout is None or r["readout"].startswith(readout)) and ":gate=none" not in r["memory_spec"]]
    return sum(vals) / len(vals) if vals else float("nan")


def notes(summary):
    """Short, data-driven observations (every number below is read from the sweep)."""
    out = ["What the numbers say:", ""]
    budgets = sorted({int(r["budget_floats"]) for r in summary})
    for b in budgets:
        wins, losses = [], []
        for n in sorted({int(r["n"]) for r in summary if r["task_spec"].startswith("assoc_recall")}):
            dl, li = mean_acc(summary, "delta", "assoc_recall", b, n), mean_acc(summary, "linear", "assoc_recall", b, n)
            if math.isnan(dl) or math.isnan(li):
                continue
            if dl > li + 0.05:
                wins.append("n=%d (%.0f vs %.0f%%)" % (n, 100 * dl, 100 * li))
            elif li > dl + 0.05:
                losses.append("n=%d (%.0f vs %.0f%%)" % (n, 100 * dl, 100 * li))
        if wins or losses:
            out.append("- Delta rule vs additive grid at %d floats: delta ahead at %s; behind at %s." %
                       (b, ", ".join(wins) or "no n", ", ".join(losses) or "no n"))
    out.append("  With random keys the delta rule (β = 1) keeps the most recent pairs exactly and erases "
               "older ones, so past capacity it tracks the share of recent pairs, while the additive grid "
               "spreads crosstalk evenly over all of them.")
    for b in budgets:
        s = mean_acc(summary, "selective", "selective_copying", b, 256, "native")
        r = mean_acc(summary, "rotation", "selective_copying", b, 256)
        sp = mean_acc(summary, "selective", "selective_copying", b, 256, "probe")
        if not math.isnan(s):
            probe = "" if math.isnan(sp) else ", %.0f%% (probe)" % (100 * sp)
            out.append("- Selective copying, L = 256, %d floats: selective SSM %.0f%% (own read)%s; "
                       "rotation RNN %.0f%% (probe)." % (b, 100 * s, probe, 100 * r))
    caps = {}
    for m in ("linear", "hrr", "selective", "softmax"):
        for b in budgets:
            pts = [(int(r["n"]), fnum(r["accuracy_mean_frac"])) for r in summary
                   if base(r["memory_spec"]) == m and r["task_spec"].startswith("assoc_recall")
                   and int(r["budget_floats"]) == b and ":gate=none" not in r["memory_spec"]]
            caps[(m, b)] = capacity(pts) if pts else None
    if len(budgets) >= 2:
        b1, b2 = budgets[-2], budgets[-1]
        out.append("- Reads that are linear in the query hit a ceiling at d x d floats. The grid, HRR and the "
                   "selective model reach n = %s, %s and %s at %d floats and %s, %s and %s at %d: every d-dimensional "
                   "key enters the state through a fixed linear map, so each read is a d_v x d_k linear function "
                   "of the query, the capacity of a d x d grid whatever the state size. Only the softmax cache, "
                   "whose read is non-linear in the query, keeps growing (n = %s at %d floats, %s at %d)." %
                   (caps[("linear", b1)], caps[("hrr", b1)], caps[("selective", b1)], b1,
                    caps[("linear", b2)], caps[("hrr", b2)], caps[("selective", b2)], b2,
                    caps[("softmax", b1)], b1, caps[("softmax", b2)], b2))
    return out


def theory_notes(summary):
    parts = []
    for n in (128, 256, 512):
        m = mean_acc(summary, "linear", "assoc_recall", 4096, n)
        if not math.isnan(m):
            parts.append("grid at 4096 floats, n = %d: theory %.0f%%, measured %.0f%%" % (n, 100 * grid_theory(n, 64, 4096), 100 * m))
    for n in (16, 64):
        m = mean_acc(summary, "hrr", "assoc_recall", 1024, n)
        if not math.isnan(m):
            parts.append("HRR at 1024 floats, n = %d: theory %.0f%%, measured %.0f%%" % (n, 100 * hrr_theory(n, 64, 1024), 100 * m))
    text = "; ".join(parts) + ". "
    text += ("The model has the right shape for both: a plateau near 100% while the noise is small against the "
             "signal and a fall once n approaches d_eff (grid) or D/4 (HRR). Where they disagree: the HRR model "
             "assumes keys and values spread over all D dimensions, but with fixed linear maps from d = 64 they "
             "span only a 64-dimensional subspace, so above d x d floats HRR reads like the d x d grid and the "
             "model overestimates it (visible at 16384 floats). The model also ignores correlations between "
             "candidate scores, so it is a guide to where capacity ends rather than a fit.")
    return text


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "reports")
