#!/usr/bin/python3
"""The chained-lookup and "nothing fits" sections of REPORT.md, from their committed CSVs.

    section(reports_dir, figures_dir) -> Markdown text ("" when neither study's CSV is there)

Reads (scripts/sweeps/chains.ini and abstention.ini, aggregated with `memcap aggregate`):
  chains/chains_summary.csv          chain_recall per hop (cleanup=nearest and none) and the
                                     one-hop curve against the query-key cosine
                                     (assoc_recall:cosine=c), per memory at two budgets
  abstention/abstention_summary.csv  assoc_recall:absent=0.5 per memory, budget and n
Writes figures/chains.png and figures/abstention.png.

Models (docs/chains-and-abstention.md):
  cleanup=nearest  p_h = p1 p_{h-1} + (1 - p_{h-1}) (1 - p1)/(n - 1), p1 = the measured hop 1
                   (memories/theory.hpp, chain_cleanup_accuracy): p1^h plus the chance that a
                   second error lands back on the chain.
  cleanup=none     composition of the measured one-hop curves: a hop asked with query-key
                   cosine c is right with A(c) and its read has cosine R(c) to its target, so
                   c_0 = 1, p_h = A(c_{h-1}), c_h = R(c_{h-1}); A and R are interpolated
                   linearly in c between the measured cosines, with A(0) = 1/n, R(0) = 0 (a
                   query unrelated to every key reads at chance).
Every number and sentence is a deterministic function of the CSVs.
"""
import csv
import os
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _read(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _f(x):
    return float(x) if x not in ("", None) else float("nan")


def _name(spec):
    return spec.split(":")[0]


def _label(spec):
    if spec.startswith("softmax"):
        return "softmax" + (" + null slot" if "null=" in spec else "")
    return _name(spec)


def _task_param(task, key):
    for kv in task.split(":", 1)[1].split(",") if ":" in task else []:
        k, _, v = kv.partition("=")
        if k == key:
            return v
    return None


def _se(r):
    """Standard error of a mean accuracy over seeds, with the binomial floor of one seed's queries
    (harness/results/stats.hpp): sd >= sqrt(p (1 - p) / q), p clamped to [1/q, 1 - 1/q]."""
    seeds = int(r["seeds"]) - int(r["errors"])
    q = int(r["queries"]) / max(seeds, 1)
    p = min(max(_f(r["accuracy_mean_frac"]), 1.0 / q), 1.0 - 1.0 / q)
    sd = max(_f(r["accuracy_sd_frac"]), (p * (1.0 - p) / q) ** 0.5)
    return sd / max(seeds, 1) ** 0.5


def cleanup_model(p1, n, hops):
    """chain_cleanup_accuracy of memories/theory.hpp, hops 1..hops."""
    out, p = [p1], p1
    back = (1.0 - p1) / (n - 1)
    for _ in range(2, hops + 1):
        p = p1 * p + (1.0 - p) * back
        out.append(p)
    return out


def _interp(points, c):
    """Linear interpolation in sorted (x, y) points (clamped at the ends)."""
    if c <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if c <= x1:
            return y0 + (y1 - y0) * (c - x0) / (x1 - x0)
    return points[-1][1]


def composition_model(curve, n, hops):
    """cleanup=none from the one-hop curve: [(c, A, R)] measured at query-key cosines c."""
    pts = sorted([(0.0, 1.0 / n, 0.0)] + curve)
    acc = [(c, a) for c, a, _ in pts]
    cos = [(c, r) for c, _, r in pts]
    out, c = [], 1.0
    for _ in range(hops):
        out.append(_interp(acc, c))
        c = max(0.0, _interp(cos, c))
    return out


def _chains(rows, figures):
    # (memory, budget) -> n, d, per-mode {hop: (mean, lo, hi)}, the one-hop curve
    groups = OrderedDict()
    for r in rows:
        if r["errors"] != "0" or r["accuracy_mean_frac"] == "":
            continue
        key = (r["memory_spec"], int(r["budget_floats"]))
        g = groups.setdefault(key, {"n": int(r["n"]), "d": int(r["d"]), "nearest": {}, "none": {}, "curve": [],
                                     "seeds": int(r["seeds"])})
        task = r["task_spec"]
        if task.startswith("chain_recall"):
            g[_task_param(task, "cleanup")][int(r["slot"])] = (
                _f(r["accuracy_mean_frac"]), _f(r["accuracy_ci95_lo_frac"]), _f(r["accuracy_ci95_hi_frac"]),
                _se(r), _f(r["target_cos_mean"]))
        elif task.startswith("assoc_recall"):
            g["curve"].append((_f(_task_param(task, "cosine")), _f(r["accuracy_mean_frac"]), _f(r["target_cos_mean"])))
    if not groups:
        return []
    budgets = sorted({b for _, b in groups})
    fig, axes = plt.subplots(1, len(budgets), figsize=(5.2 * len(budgets), 4.0), squeeze=False)
    colors = {}
    lines = ["## Chained lookups", "",
             "A query follows h hops through n stored pairs item → next item (one random cycle), each hop's read "
             "becoming the next query (`chain_recall`): with an item memory that cleans each read up to the nearest "
             "stored item (`cleanup=nearest`) or without (`cleanup=none`, the read itself, normalised). Each memory at "
             "its frontier width for one-hop recall at that budget and n; %d seeds of 32 chains; 95%% t intervals over "
             "seeds. Dashed: with cleanup, p_h = p1·p_{h−1} + (1 − p_{h−1})(1 − p1)/(n − 1) from the measured hop 1 "
             "(≈ p1^h); dotted: without cleanup, the composition of the measured one-hop curves against the query–key "
             "cosine (accuracy A(c) and read cosine R(c) of `assoc_recall:cosine=c`; c_h = R(c_{h−1})). "
             "Command: `memcap sweep scripts/sweeps/chains.ini --out reports/chains`." % next(iter(groups.values()))["seeds"],
             "", "![chained lookups](figures/chains.png)", "",
             "| memory | budget | n | d | mode | " + " | ".join("hop %d" % h for h in range(1, 7)) + " |",
             "|---|---:|---:|---:|---|" + "---:|" * 6]
    verdicts, diverge = [], []
    for (mem, budget), g in groups.items():
        hops = max(g["nearest"]) if g["nearest"] else 0
        if not hops:
            continue
        ax = axes[0][budgets.index(budget)]
        label = _label(mem)
        color = colors.setdefault(label, "C%d" % len(colors))
        hs = list(range(1, hops + 1))
        near = [g["nearest"][h][0] for h in hs]
        none = [g["none"].get(h, (float("nan"),) * 3)[0] for h in hs]
        model_c = cleanup_model(near[0], g["n"], hops)
        model_n = composition_model(g["curve"], g["n"], hops) if g["curve"] else [float("nan")] * hops
        ax.plot(hs, near, "o-", color=color, label=label)
        ax.plot(hs, none, "s:", color=color, alpha=0.8)
        ax.plot(hs, model_c, "--", color=color, alpha=0.6, lw=1)
        ax.plot(hs, model_n, "-.", color=color, alpha=0.4, lw=1)

        def row(mode, vals, cis=None):
            cells = []
            for i, v in enumerate(vals):
                text = "%.1f" % (100 * v)
                if cis is not None:
                    lo, hi = cis[i]
                    text += " [%.1f, %.1f]" % (100 * lo, 100 * hi)
                cells.append(text)
            return "| `%s` | %d | %d | %d | %s | %s |" % (mem, budget, g["n"], g["d"], mode, " | ".join(cells))

        lines.append(row("cleanup", near, [g["nearest"][h][1:3] for h in hs]))
        lines.append(row("*model p1-chain*", model_c))
        lines.append(row("no cleanup", none, [g["none"].get(h, (0, float("nan"), float("nan")))[1:3] for h in hs]))
        lines.append(row("*model composition*", model_n))
        # Cleanup model agreement: |measured - model| within 3 standard errors of the difference
        # (the hop's, and the model's through p1: its slope times p1's), as tests/test_chains.cpp.
        se1 = g["nearest"][1][3]
        misses = []
        for h in hs[1:]:
            slope = (cleanup_model(near[0] + 1e-4, g["n"], h)[-1] - cleanup_model(near[0] - 1e-4, g["n"], h)[-1]) / 2e-4
            if abs(near[h - 1] - model_c[h - 1]) > 3.0 * (g["nearest"][h][3] ** 2 + (slope * se1) ** 2) ** 0.5:
                misses.append(h)
        verdicts.append((label, budget, misses, near[0], near[-1], model_c[-1], hops))
        # Where the modes part: the first hop whose intervals do not overlap.
        part = next((h for h in hs if h in g["none"] and g["none"][h][2] < g["nearest"][h][1]), None)
        res = max(abs(a - b) for a, b in zip(none, model_n)) if g["curve"] else float("nan")
        diverge.append((label, budget, part, none[-1], near[-1], res, hops, g["nearest"][1][4], 1.0 / g["n"]))
    for b, ax in zip(budgets, axes[0]):
        ax.set_title("budget %d floats" % b)
        ax.set_xlabel("hop")
        ax.set_ylabel("accuracy")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8, title="o— cleanup  s··· none\n-- p1-chain  -· composition", title_fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(figures, "chains.png"), dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)

    lines += ["", "**How errors compound.** With cleanup, every hop asks a clean stored item, so hops fail "
              "independently and the p1-chain model holds: "]
    bad = [v for v in verdicts if v[2]]
    lines[-1] += ("measured and model agree within 3 standard errors (of the hop's mean and of the model through p1) "
                  "at every hop for %d of %d (memory, budget) curves" % (len(verdicts) - len(bad), len(verdicts)))
    if bad:
        lines[-1] += " (not at " + "; ".join("%s, B = %d: hop %s" % (l, b, ", ".join(map(str, m))) for l, b, m, *_ in bad) + ")"
    lines[-1] += ". Without cleanup, a hop's read is the next query, and its cosine to its target — "
    lines[-1] += ", ".join("%s %.2f (B = %d)" % (l, c1, b) for l, b, _, _, _, _, _, c1, _ in diverge)
    lines[-1] += " at hop 1 — is the next hop's query–key cosine. "
    strong = [d for d in diverge if d[4] > 5 * d[8]]  # cleanup still well above chance at the last hop
    weak = [d for d in diverge if d[4] <= 5 * d[8]]
    keep = [d for d in strong if d[3] >= 0.5 * d[4]]
    lose = [d for d in strong if d[3] < 0.5 * d[4]]
    if keep:
        lines[-1] += ("Reads clean enough to chain without an item memory: " + "; ".join(
            "%s (B = %d: %.0f%% at hop %d without cleanup vs %.0f%% with%s)" % (
                l, b, 100 * nl, h, 100 * cl, "" if part is None else ", apart from hop %d on" % part)
            for l, b, part, nl, cl, _, h, _, _ in keep) + ". ")
    if lose:
        lines[-1] += ("Not clean enough (less than half of the cleanup accuracy at the last hop): " + "; ".join(
            "%s (B = %d: %.0f%% vs %.0f%% at hop %d%s)" % (
                l, b, 100 * nl, 100 * cl, h, "" if part is None else ", apart from hop %d" % part)
            for l, b, part, nl, cl, _, h, _, _ in lose) + ". ")
    if weak:
        lines[-1] += ("Too weak at one hop to tell (even with cleanup within 5x chance by the last hop): " +
                      ", ".join("%s (B = %d)" % (l, b) for l, b, *_ in weak) + ". ")
    lines[-1] += ("The composition model, built only from the one-hop curves, misses the measured no-cleanup curve by "
                  "at most " + ", ".join("%.0f (%s, B = %d)" % (100 * res, l, b) for l, b, _, _, _, res, *_ in diverge) +
                  " points; it assumes a read's crosstalk acts like the isotropic query noise of `assoc_recall:cosine=c`, "
                  "and where it misses, it does not.")
    lines.append("")
    return lines


def _chosen(r):
    """True when the row's width was chosen on tuning seeds (d = best)."""
    return "d" in r["tuned"].split(",")


def _abstention(rows, figures):
    rows = [r for r in rows if r["errors"] == "0" and r["auc_mean_frac"] != ""]
    if not rows:
        return []
    budgets = sorted({int(r["budget_floats"]) for r in rows})
    key = lambda r: ("softmax:null" if "null=" in r["memory_spec"] else "softmax") if r["memory_spec"].startswith(
        "softmax") else r["memory_spec"]
    chosen = [r for r in rows if _chosen(r)]
    mems = list(OrderedDict.fromkeys(key(r) for r in chosen))
    fig, axes = plt.subplots(2, len(budgets), figsize=(5.2 * len(budgets), 7.0), squeeze=False)
    for j, b in enumerate(budgets):
        for i, m in enumerate(mems):
            rs = sorted([r for r in chosen if key(r) == m and int(r["budget_floats"]) == b], key=lambda r: int(r["n"]))
            ns = [int(r["n"]) for r in rs]
            label = "softmax + null slot" if m == "softmax:null" else _name(m)
            style = dict(color="C%d" % i, marker="o", label=label, ls="--" if m == "softmax:null" else "-")
            for k, col in enumerate(("auc", "balanced_accuracy")):
                ax = axes[k][j]
                y = [_f(r[col + "_mean_frac"]) for r in rs]
                lo = [_f(r[col + "_ci95_lo_frac"]) for r in rs]
                hi = [_f(r[col + "_ci95_hi_frac"]) for r in rs]
                ax.plot(ns, y, **style)
                ax.fill_between(ns, lo, hi, color=style["color"], alpha=0.12)
        for k, what in enumerate(("AUC", "balanced accuracy")):
            ax = axes[k][j]
            ax.set_xscale("log", base=2)
            ax.set_title("budget %d floats, widths chosen" % b)
            ax.set_xlabel("n (stored pairs)")
            ax.set_ylabel(what)
            ax.axhline(0.5, color="grey", lw=0.8, ls=":")
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(figures, "abstention.png"), dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)

    seeds = rows[0]["seeds"]
    lines = ["## Nothing fits", "",
             "Half of the queries ask for a key never written (`assoc_recall:absent=0.5`, 16 of 32 per episode). The "
             "memory reads as usual; the readout answers when the read's best candidate score (its dot product with "
             "its nearest candidate) reaches a threshold chosen on 5 tuning seeds for balanced accuracy, and abstains "
             "below it. Balanced accuracy = ½ (present queries answered and right + absent queries rejected); AUC is "
             "the threshold-free area under the ROC curve of the score. Widths chosen on tuning seeds for balanced "
             "accuracy (d marked *chosen*; the cache's null-slot logit too), and the two caches again at fixed widths "
             "8 and 16; %s seeds; 95%% t intervals over seeds. Command: `memcap sweep "
             "scripts/sweeps/abstention.ini --out reports/abstention`." % seeds, "",
             "![abstention](figures/abstention.png)", "",
             "| memory | budget | n | d | state floats | present accuracy | false accept | balanced accuracy | AUC |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append("| `%s` | %s | %s | %s | %s | %.1f | %.1f | %.1f [%.1f, %.1f] | %.3f [%.3f, %.3f] |" % (
            r["memory_spec"], r["budget_floats"], r["n"], r["d"] + (" (chosen)" if _chosen(r) else ""),
            r["state_floats"], 100 * _f(r["accuracy_mean_frac"]),
            100 * _f(r["false_accept_mean_frac"]), 100 * _f(r["balanced_accuracy_mean_frac"]),
            100 * _f(r["balanced_accuracy_ci95_lo_frac"]), 100 * _f(r["balanced_accuracy_ci95_hi_frac"]),
            _f(r["auc_mean_frac"]), _f(r["auc_ci95_lo_frac"]), _f(r["auc_ci95_hi_frac"])))
    # The null slot against the plain cache at each (budget, n, width: chosen or fixed).
    frame = lambda r: (r["budget_floats"], r["n"], "chosen" if _chosen(r) else r["d"])
    plain = {frame(r): r for r in rows if key(r) == "softmax"}
    null = {frame(r): r for r in rows if key(r) == "softmax:null"}
    verdict = {"better": [], "worse": [], "same": []}
    for k in plain:
        if k not in null:
            continue
        a, b = plain[k], null[k]
        if _f(b["balanced_accuracy_ci95_lo_frac"]) > _f(a["balanced_accuracy_ci95_hi_frac"]):
            verdict["better"].append(k)
        elif _f(b["balanced_accuracy_ci95_hi_frac"]) < _f(a["balanced_accuracy_ci95_lo_frac"]):
            verdict["worse"].append(k)
        else:
            verdict["same"].append(k)
    pts = lambda ks: ", ".join("B = %s, n = %s, d %s (%.1f vs %.1f)" % (
        k[0], k[1], ("chosen: %s vs %s" % (null[k]["d"], plain[k]["d"])) if k[2] == "chosen" else "= " + k[2],
        100 * _f(null[k]["balanced_accuracy_mean_frac"]), 100 * _f(plain[k]["balanced_accuracy_mean_frac"])) for k in ks)
    total = sum(len(v) for v in verdict.values())
    fixed = {k: v for k, v in ((w, [k for k in ks if k[2] != "chosen"]) for w, ks in verdict.items())}
    text = ("**Does the null slot help a head say that nothing fits?** Against the plain cache at equal budget "
            "(the slot's row counted), its balanced accuracy is higher with non-overlapping intervals at %d of %d "
            "points (%d of %d at the same fixed width)%s, lower at %d%s, and indistinguishable at the other %d." % (
                len(verdict["better"]), total, len(fixed["better"]), sum(len(v) for v in fixed.values()),
                (": " + pts(verdict["better"])) if verdict["better"] else "", len(verdict["worse"]),
                (": " + pts(verdict["worse"])) if verdict["worse"] else "", len(verdict["same"])))
    if verdict["worse"] and all(k[2] == "chosen" and null[k]["d"] != plain[k]["d"] for k in verdict["worse"]):
        text += (" Where it is lower, the race on tuning seeds gave the two caches different widths (candidates "
                 "that stay tied there go to the cheapest)")
        text += "; at a fixed width it is never lower." if not fixed["worse"] else "."
    if verdict["better"]:
        k = max(verdict["better"], key=lambda k: _f(null[k]["balanced_accuracy_mean_frac"]) -
                _f(plain[k]["balanced_accuracy_mean_frac"]))
        text += (" The largest gain, %.1f points, is at B = %s, n = %s, d %s, where the plain cache accepts %.1f%% "
                 "of absent queries and the slot %.1f%%." % (
                     100 * (_f(null[k]["balanced_accuracy_mean_frac"]) - _f(plain[k]["balanced_accuracy_mean_frac"])),
                     k[0], k[1], "chosen" if k[2] == "chosen" else "= " + k[2],
                     100 * _f(plain[k]["false_accept_mean_frac"]), 100 * _f(null[k]["false_accept_mean_frac"])))
    # Which memories abstain at all: AUC interval above 0.5, widths chosen.
    able = OrderedDict()
    for r in chosen:
        if _f(r["auc_ci95_lo_frac"]) > 0.5:
            able.setdefault(key(r), []).append(int(r["n"]))
    text += (" The largest n at which each memory's AUC interval lies above 0.5 (it tells absent from present "
             "queries at all; widths chosen): " +
             ", ".join("%s %d" % ("softmax + null slot" if m == "softmax:null" else _name(m), max(ns))
                       for m, ns in able.items()) + ".")
    lines += ["", text, ""]
    return lines


def section(reports_dir, figures_dir):
    chains = _read(os.path.join(reports_dir, "chains", "chains_summary.csv"))
    absent = _read(os.path.join(reports_dir, "abstention", "abstention_summary.csv"))
    lines = _chains(chains, figures_dir) + _abstention(absent, figures_dir)
    return "\n".join(lines) + ("\n" if lines else "")


if __name__ == "__main__":
    import sys

    out = sys.argv[1] if len(sys.argv) > 1 else "reports"
    figs = os.path.join(out, "figures")
    os.makedirs(figs, exist_ok=True)
    sys.stdout.write(section(out, figs))
