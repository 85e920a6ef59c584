"""Nothing fits (abstention/abstention_summary.csv, from scripts/studies/abstention/abstention.ini): queries
for keys never written, the read's score against a threshold; balanced accuracy and AUC per
memory, and whether a null slot helps (figures/abstention.png)."""
import os
import sys
from collections import OrderedDict

from memcap_report.common import (SUMMARY_COLUMNS, Context, run, base, fnum, list_words, optional_csv, param, plt, read_manifest, spec_params,
                                  tuned_keys)
from memcap_report.race import at_end

COLUMNS = SUMMARY_COLUMNS + ("auc_mean_frac", "auc_ci95_lo_frac", "auc_ci95_hi_frac", "balanced_accuracy_mean_frac",
                             "balanced_accuracy_ci95_lo_frac", "balanced_accuracy_ci95_hi_frac",
                             "false_accept_mean_frac")


def name(key):
    """A memory's label: its backend, with the null slot where it has one."""
    return base(key) + (" + null slot" if key.endswith(":null") else "")


def _chosen(r):
    """True when the row's width was chosen on tuning seeds (d = best)."""
    return "d" in tuned_keys(r["tuned"])


def figures_and_lines(rows, figures, manifest=None):
    rows = [r for r in rows if r["errors"] == "0" and r["auc_mean_frac"] != ""]
    if not rows:
        return []
    budgets = sorted({int(r["budget_floats"]) for r in rows})
    # a memory with a null slot in some rows (the cache's optional `null` logit) is one memory with
    # and one without it; every other memory is its spec
    nulled = list(OrderedDict.fromkeys(base(r["memory_spec"]) for r in rows if "null" in spec_params(r["memory_spec"])))

    def key(r):
        m = r["memory_spec"]
        return base(m) + (":null" if "null" in spec_params(m) else "") if base(m) in nulled else m

    chosen = [r for r in rows if _chosen(r)]
    mems = list(OrderedDict.fromkeys(key(r) for r in chosen))
    fig, axes = plt.subplots(2, len(budgets), figsize=(5.2 * len(budgets), 7.0), squeeze=False)
    for j, b in enumerate(budgets):
        for i, m in enumerate(mems):
            rs = sorted([r for r in chosen if key(r) == m and int(r["budget_floats"]) == b], key=lambda r: int(r["n"]))
            ns = [int(r["n"]) for r in rs]
            style = dict(color="C%d" % i, marker="o", label=name(m), ls="--" if m.endswith(":null") else "-")
            for k, col in enumerate(("auc", "balanced_accuracy")):
                ax = axes[k][j]
                y = [fnum(r[col + "_mean_frac"]) for r in rs]
                lo = [fnum(r[col + "_ci95_lo_frac"]) for r in rs]
                hi = [fnum(r[col + "_ci95_hi_frac"]) for r in rs]
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
    absent, queries = param(rows[0]["task_spec"], "absent"), int(param(rows[0]["task_spec"], "queries"))
    share = "Half" if float(absent) == 0.5 else "A share %s" % absent
    fixed_keys = list(OrderedDict.fromkeys(key(r) for r in rows if not _chosen(r)))
    fixed_widths = sorted({int(r["d"]) for r in rows if not _chosen(r)})
    if nulled and sorted(fixed_keys) == sorted([nulled[0], nulled[0] + ":null"]):
        fixed_who = "the two caches"
    else:
        fixed_who = list_words([name(k) for k in fixed_keys]) if fixed_keys else ""
    fixed_text = (", and %s again at fixed width%s %s" % (fixed_who, "s" if len(fixed_widths) > 1 else "",
                                                           list_words(str(d) for d in fixed_widths))
                  if fixed_keys else "")
    lines = ["## Nothing fits", "",
             "%s of the queries ask for a key never written (`assoc_recall:absent=%s`, %d of %d per episode). The "
             "memory reads as usual; the readout answers when the read's best candidate score (its dot product with "
             "its nearest candidate) reaches a threshold chosen on 5 tuning seeds for balanced accuracy, and abstains "
             "below it. Balanced accuracy = ½ (present queries answered and right + absent queries rejected); AUC is "
             "the threshold-free area under the ROC curve of the score. Widths chosen on tuning seeds for balanced "
             "accuracy (d marked *chosen*; the cache's null-slot logit too)%s; %s seeds; 95%% t intervals over "
             "seeds. Command: `memcap sweep scripts/studies/abstention/abstention.ini --out reports/abstention`." % (
                 share, absent, round(float(absent) * queries), queries, fixed_text, seeds), "",
             "![abstention](figures/abstention.png)", "",
             "| memory | budget | n | d | state floats | present accuracy | false accept | balanced accuracy | AUC |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append("| `%s` | %s | %s | %s | %s | %.1f | %.1f | %.1f [%.1f, %.1f] | %.3f [%.3f, %.3f] |" % (
            r["memory_spec"], r["budget_floats"], r["n"], r["d"] + (" (chosen)" if _chosen(r) else ""),
            r["state_floats"], 100 * fnum(r["accuracy_mean_frac"]),
            100 * fnum(r["false_accept_mean_frac"]), 100 * fnum(r["balanced_accuracy_mean_frac"]),
            100 * fnum(r["balanced_accuracy_ci95_lo_frac"]), 100 * fnum(r["balanced_accuracy_ci95_hi_frac"]),
            fnum(r["auc_mean_frac"]), fnum(r["auc_ci95_lo_frac"]), fnum(r["auc_ci95_hi_frac"])))
    # The null slot against the plain cache at each (budget, n, width: chosen or fixed).
    frame = lambda r: (r["budget_floats"], r["n"], "chosen" if _chosen(r) else r["d"])
    plain = {frame(r): r for r in rows if nulled and key(r) == nulled[0]}
    null = {frame(r): r for r in rows if nulled and key(r) == nulled[0] + ":null"}
    verdict = {"better": [], "worse": [], "same": []}
    for k in plain:
        if k not in null:
            continue
        a, b = plain[k], null[k]
        if fnum(b["balanced_accuracy_ci95_lo_frac"]) > fnum(a["balanced_accuracy_ci95_hi_frac"]):
            verdict["better"].append(k)
        elif fnum(b["balanced_accuracy_ci95_hi_frac"]) < fnum(a["balanced_accuracy_ci95_lo_frac"]):
            verdict["worse"].append(k)
        else:
            verdict["same"].append(k)
    pts = lambda ks: ", ".join("B = %s, n = %s, d %s (%.1f vs %.1f)" % (
        k[0], k[1], ("chosen: %s vs %s" % (null[k]["d"], plain[k]["d"])) if k[2] == "chosen" else "= " + k[2],
        100 * fnum(null[k]["balanced_accuracy_mean_frac"]), 100 * fnum(plain[k]["balanced_accuracy_mean_frac"])) for k in ks)
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
        k = max(verdict["better"], key=lambda k: fnum(null[k]["balanced_accuracy_mean_frac"]) -
                fnum(plain[k]["balanced_accuracy_mean_frac"]))
        text += (" The largest gain, %.1f points, is at B = %s, n = %s, d %s, where the plain cache accepts %.1f%% "
                 "of absent queries and the slot %.1f%%." % (
                     100 * (fnum(null[k]["balanced_accuracy_mean_frac"]) - fnum(plain[k]["balanced_accuracy_mean_frac"])),
                     k[0], k[1], "chosen" if k[2] == "chosen" else "= " + k[2],
                     100 * fnum(plain[k]["false_accept_mean_frac"]), 100 * fnum(null[k]["false_accept_mean_frac"])))
    # Which memories abstain at all: AUC interval above 0.5, widths chosen.
    able = OrderedDict()
    for r in chosen:
        if fnum(r["auc_ci95_lo_frac"]) > 0.5:
            able.setdefault(key(r), []).append(int(r["n"]))
    text += (" The largest n at which each memory's AUC interval lies above 0.5 (it tells absent from present "
             "queries at all; widths chosen): " +
             ", ".join("%s %d" % (name(m), max(ns))
                       for m, ns in able.items()) + ".")
    ends = OrderedDict()
    for r in rows:
        for k in [k for k in tuned_keys(r["tuned"]) if k != "d"]:
            v = spec_params(r["memory_spec"]).get(k)
            end = at_end(manifest or {}, base(r["memory_spec"]), k, v) if v is not None else None
            if end:
                ends.setdefault("%s's %s = %s (the %s candidate)" % (base(r["memory_spec"]), k, v, end), []).append(
                    "B = %s, n = %s" % (r["budget_floats"], r["n"]))
    if ends:
        text += (" Chosen at an end of its candidates (`memcap list`), so the candidates may stop short of the "
                 "memory's best there: " + "; ".join("%s at %s" % (w, ", ".join(at)) for w, at in ends.items()) + ".")
    lines += ["", text, ""]
    return lines


def load(ctx):
    """(summary rows, manifest); None when abstention/abstention_summary.csv is not there."""
    rows = optional_csv(os.path.join(ctx.reports_dir, "abstention", "abstention_summary.csv"), COLUMNS)
    if not rows:
        return None
    return rows, read_manifest(os.path.join(ctx.reports_dir, "abstention", "abstention.csv.manifest.json"))


def compute(data):
    """Plain rows: none of its own yet (the tables are computed in render)."""
    return []


def render(data, rows, ctx):
    return figures_and_lines(data[0], ctx.figures, data[1])


def section(reports_dir, figures_dir):
    """The "Nothing fits" lines ([] when the study's summary is not there)."""
    return run(sys.modules[__name__], Context(reports_dir, figures_dir))
