"""The essay's frame: every memory at the essays' code width d = 64 (nothing tuned). Its
figures (accuracy against n, accuracy against state at fixed n, selective copying), the
capacity tables per task and what the numbers say."""
import math
import os
from collections import OrderedDict, defaultdict

import numpy as np

from memcap_report.common import (COLOURS, ORDER, base, capacity, fmt_cap, fnum, list_words, noise_words, plt, save,
                                  seeds_text, style)
from memcap_report.theory import broken, theory_curve, theory_notes


def by_group(summary):
    """Summary rows per (memory, task, readout, budget)."""
    by_key = defaultdict(list)
    for r in summary:
        by_key[(r["memory_spec"], r["task_spec"].split(":")[0], r["readout"].split(":")[0],
                int(r["budget_floats"]))].append(r)
    return by_key


def figures(summary, theory, figures):
    """assoc_recall_vs_n.png, essay_frame_capacity.png and selective_copying.png."""
    by_key = by_group(summary)
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
            tx, ty = theory_curve(theory, "fixed", base(mem), rs[0]["task_spec"], b)
            if tx:
                ax.plot(*broken(tx, ty), "--", color=c, lw=1)
        ax.set_title("budget %d floats" % b)
        style(ax, "stored pairs n", "accuracy (%)" if b == budgets[0] else "")
    np.atleast_1d(axes)[0].legend(fontsize=8, loc="lower left")
    fig.suptitle("The essay's frame: associative recall at d = 64, %s seeds (band: 95%% interval; dashed: "
                 "memories/theory.hpp where it applies)" % seeds_text(summary))
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
    fig.suptitle("The essay's frame: associative recall at fixed n, d = 64")
    save(fig, os.path.join(figures, "essay_frame_capacity.png"))

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


def section(rows, exps, summary, theory):
    """The essay frame's Markdown: the capacity table per task and what the numbers say."""
    budgets_all = sorted({r["budget_floats"] for r in rows})
    lines = ["## The essay's frame: capacity at equal budgets, d = 64", "",
              "Every memory at the essays' code width d = 64 (nothing tuned): %d memories, budgets of %d to %d "
              "floats of state, %s seeds. "
              "Capacity: scanning n (stored pairs; for lag recall the lag, for copying L) upward from the "
              "smallest size tried, the last one whose mean accuracy over seeds is at least 90%% before the "
              "first that is not (as the essays read it; the frontier above takes the largest passing n). The exponent is the least-squares slope of log capacity against "
              "log budget over the budgets where the capacity lies inside the range tried." %
              (len({base(r["memory_spec"]) for r in summary}), budgets_all[0], budgets_all[-1], seeds_text(summary)), "",
              "![accuracy vs n](figures/assoc_recall_vs_n.png)", "",
              "![capacity at d = 64](figures/essay_frame_capacity.png)", ""]
    tasks = list(OrderedDict.fromkeys(r["task"] for r in rows))
    for task in tasks:
        trs = [r for r in rows if r["task"] == task]
        budgets = sorted({r["budget_floats"] for r in trs})
        mems = list(OrderedDict.fromkeys((r["memory_spec"], r["readout"], r["noise"]) for r in trs))
        axis = trs[0]["axis"]
        lines.append("**%s** — capacity (%s at ≥ 90%%; `<a` = below the smallest %s tried, `≥b` = the largest tried):" % (task, axis, axis))
        lines.append("")
        lines.append("| memory | readout | " + " | ".join("B = %d" % b for b in budgets) + " | exponent |")
        lines.append("|---|---|" + "---:|" * len(budgets) + "---:|")
        for mem, readout, noise in mems:
            cells = []
            for b in budgets:
                r = next((x for x in trs if (x["memory_spec"], x["readout"], x["noise"]) == (mem, readout, noise)
                          and x["budget_floats"] == b), None)
                cells.append("" if r is None else fmt_cap(r["capacity"], r["largest_tried"], r["smallest_tried"]))
            e = exps.get(("essay", mem, task, noise, readout))
            label = mem + ("" if noise in ("", "cosine=1") else ", " + noise_words(noise))
            lines.append("| `%s` | %s | %s | %s |" % (label, readout, " | ".join(cells), "" if e is None else "%.2f" % e))
        lines.append("")
    lines += notes(summary)
    lines += ["", "![selective copying](figures/selective_copying.png)", "",
              "### Theory beside measurement at d = 64", "", theory_notes(theory), ""]
    return lines


def mean_acc(summary, mem_base, task, budget, n=None, readout=None):
    vals = [fnum(r["accuracy_mean_frac"]) for r in summary
            if base(r["memory_spec"]) == mem_base and r["task_spec"].split(":")[0] == task
            and int(r["budget_floats"]) == budget and (n is None or int(r["n"]) == n)
            and (readout is None or r["readout"].startswith(readout)) and ":gate=none" not in r["memory_spec"]]
    return sum(vals) / len(vals) if vals else float("nan")




# The essays' own comparisons in this frame, each between two backends the essays name (a
# comparison whose backends are not in the sweep is left out): the delta rule against the
# additive grid on associative recall, and the selective model against the rotation RNN on
# selective copying.
DELTA_RULE, GRID = "delta", "linear"
SELECTIVE, ROTATION = "selective", "rotation"


def notes(summary):
    """Short observations, every number and every verdict read from the sweep."""
    out = ["What the numbers say:", ""]
    budgets = sorted({int(r["budget_floats"]) for r in summary})
    behind_everywhere = True
    compared = False
    for b in budgets:
        wins, losses = [], []
        for n in sorted({int(r["n"]) for r in summary if r["task_spec"].startswith("assoc_recall")}):
            dl, li = mean_acc(summary, DELTA_RULE, "assoc_recall", b, n), mean_acc(summary, GRID, "assoc_recall", b, n)
            if math.isnan(dl) or math.isnan(li):
                continue
            if dl > li + 0.05:
                wins.append("n=%d (%.0f vs %.0f%%)" % (n, 100 * dl, 100 * li))
            elif li > dl + 0.05:
                losses.append("n=%d (%.0f vs %.0f%%)" % (n, 100 * dl, 100 * li))
        if wins or losses:
            compared = True
            behind_everywhere = behind_everywhere and not wins and bool(losses)
            out.append("- Delta rule vs additive grid at %d floats: delta ahead at %s; behind at %s." %
                       (b, ", ".join(wins) or "no n", ", ".join(losses) or "no n"))
    if compared and behind_everywhere:
        out.append("  With random keys the delta rule (β = 1) keeps the most recent pairs exactly and erases "
                   "older ones, so past capacity it tracks the share of recent pairs, while the additive grid "
                   "spreads crosstalk evenly over all of them.")
    for b in budgets:
        s = mean_acc(summary, SELECTIVE, "selective_copying", b, 256, "native")
        r = mean_acc(summary, ROTATION, "selective_copying", b, 256)
        sp = mean_acc(summary, SELECTIVE, "selective_copying", b, 256, "probe")
        if not math.isnan(s):
            probe = "" if math.isnan(sp) else ", %.0f%% (probe)" % (100 * sp)
            out.append("- Selective copying, L = 256, %d floats: selective SSM %.0f%% (own read)%s; "
                       "rotation RNN %.0f%% (probe)." % (b, 100 * s, probe, 100 * r))
    out += ceiling_words(summary, budgets)
    return out


def ceiling_words(summary, budgets):
    """Which memories' associative-recall capacity at d = 64 stops growing between the two
    largest budgets, and which keeps growing."""
    if len(budgets) < 2:
        return []
    b1, b2 = budgets[-2], budgets[-1]
    caps = []
    for m in ORDER:
        per = []
        for b in (b1, b2):
            pts = [(int(r["n"]), fnum(r["accuracy_mean_frac"])) for r in summary
                   if base(r["memory_spec"]) == m and r["task_spec"].startswith("assoc_recall")
                   and int(r["budget_floats"]) == b and ":gate=none" not in r["memory_spec"]]
            per.append((capacity(pts), min(p[0] for p in pts), max(p[0] for p in pts)) if pts else None)
        if per[0] and per[1]:
            caps.append((m, per[0], per[1]))
    if not caps:
        return []
    shown = lambda c: fmt_cap(c[0], c[2], c[1])  # noqa: E731
    flat = [m for m, c1, c2 in caps if (c2[0] or 0) <= (c1[0] or 0) and c2[0] is not None and c2[0] < c2[2]]
    grow = [m for m, c1, c2 in caps if (c2[0] or 0) > (c1[0] or 0)]
    text = "- At d = 64, capacity (n at ≥ 90%%) at %d and %d floats: %s." % (
        b1, b2, "; ".join("%s %s → %s" % (m, shown(c1), shown(c2)) for m, c1, c2 in caps))
    parts = []
    if flat:
        parts.append("not growing with the state at this fixed width (the frontier above lets the width grow): %s"
                     % list_words(flat))
    if grow:
        parts.append("still growing: %s" % list_words(grow))
    if parts:
        text += " " + "; ".join(parts)[0].upper() + "; ".join(parts)[1:] + "."
    return [text]


# ------------------------------------------------------------------ the protocol (scripts/studies/README.md)

def load(ctx):
    """The main job's data (the capacity sweep's d = 64 rows, their capacity rows, the theory)."""
    return ctx.main


def compute(main):
    """Plain rows: none of its own yet (the tables are computed in render)."""
    return []


def render(main, rows, ctx):
    figures(main.summary, main.theory, ctx.figures)
    return section(main.rows, main.exps, main.summary, main.theory)
