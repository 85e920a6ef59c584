"""Chained lookups (chains/chains_summary.csv, from scripts/studies/chains/chains.ini): the hop curves
with and without cleanup beside two models, and what they say (figures/chains.png).

Models (docs/chains-and-abstention.md):
  cleanup=nearest  p_h = p1 p_{h-1} + (1 - p_{h-1}) (1 - p1)/(n - 1), p1 = the measured hop 1
                   (memories/theory.hpp, chain_cleanup_accuracy): p1^h plus the chance that a
                   second error lands back on the chain.
  cleanup=none     composition of the measured one-hop curves: a hop asked with query-key
                   cosine c is right with A(c) and its read has cosine R(c) to its target, so
                   c_0 = 1, p_h = A(c_{h-1}), c_h = R(c_{h-1}); A and R are interpolated
                   linearly in c between the measured cosines, with A(0) = 1/n, R(0) = 0 (a
                   query unrelated to every key reads at chance).
"""
import os
import sys
from collections import OrderedDict

from memcap_report.common import SUMMARY_COLUMNS, Context, run, base, fnum, optional_csv, param, plt, se, spec_params

COLUMNS = SUMMARY_COLUMNS + ("target_cos_mean",)


def memory_label(spec):
    """A memory's name, with the null slot where its spec has one."""
    return base(spec) + (" + null slot" if "null" in spec_params(spec) else "")


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


def figures_and_lines(rows, figures):
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
            g[param(task, "cleanup")][int(r["slot"])] = (
                fnum(r["accuracy_mean_frac"]), fnum(r["accuracy_ci95_lo_frac"]), fnum(r["accuracy_ci95_hi_frac"]),
                se(r), fnum(r["target_cos_mean"]))
        elif task.startswith("assoc_recall"):
            g["curve"].append((fnum(param(task, "cosine")), fnum(r["accuracy_mean_frac"]), fnum(r["target_cos_mean"])))
    if not groups:
        return []
    budgets = sorted({b for _, b in groups})
    chain_specs = [r["task_spec"] for r in rows if r["task_spec"].startswith("chain_recall")]
    chain_queries = param(chain_specs[0], "queries")
    max_hops = max(int(param(t, "hops")) for t in chain_specs)
    fig, axes = plt.subplots(1, len(budgets), figsize=(5.2 * len(budgets), 4.0), squeeze=False)
    colors = {}
    lines = ["## Chained lookups", "",
             "A query follows h hops through n stored pairs item → next item (one random cycle), each hop's read "
             "becoming the next query (`chain_recall`): with an item memory that cleans each read up to the nearest "
             "stored item (`cleanup=nearest`) or without (`cleanup=none`, the read itself, normalised). Each memory at "
             "its frontier width for one-hop recall at that budget and n; %d seeds of %s chains; 95%% t intervals over "
             "seeds. Dashed: with cleanup, p_h = p1·p_{h−1} + (1 − p_{h−1})(1 − p1)/(n − 1) from the measured hop 1 "
             "(≈ p1^h); dotted: without cleanup, the composition of the measured one-hop curves against the query–key "
             "cosine (accuracy A(c) and read cosine R(c) of `assoc_recall:cosine=c`; c_h = R(c_{h−1})). "
             "Command: `memcap sweep scripts/studies/chains/chains.ini --out reports/chains`." % (
                 next(iter(groups.values()))["seeds"], chain_queries),
             "", "![chained lookups](figures/chains.png)", "",
             "| memory | budget | n | d | mode | " + " | ".join("hop %d" % h for h in range(1, max_hops + 1)) + " |",
             "|---|---:|---:|---:|---|" + "---:|" * max_hops]
    verdicts, diverge = [], []
    for (mem, budget), g in groups.items():
        hops = max(g["nearest"]) if g["nearest"] else 0
        if not hops:
            continue
        ax = axes[0][budgets.index(budget)]
        label = memory_label(mem)
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



def load(ctx):
    """The study's summary rows; None when chains/chains_summary.csv is not there."""
    return optional_csv(os.path.join(ctx.reports_dir, "chains", "chains_summary.csv"), COLUMNS) or None


def compute(data):
    """Plain rows: none of its own yet (the tables are computed in render)."""
    return []


def render(data, rows, ctx):
    return figures_and_lines(data, ctx.figures)


def section(reports_dir, figures_dir):
    """The "Chained lookups" lines ([] when the study's summary is not there)."""
    return run(sys.modules[__name__], Context(reports_dir, figures_dir))
