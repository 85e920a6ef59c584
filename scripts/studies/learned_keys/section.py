"""The learned-keys section of REPORT.md, from the study's committed CSVs.

section(reports_dir, figures_dir, frontier_table) -> Markdown lines (frontier_table: the main
report's capacity_table.csv, for the cache's frontier capacity).

Reads REPORTS_DIR/learned_keys/ (written by the commands in its README.md):
  learned_keys.csv, learned_keys_summary.csv   the study (scripts/studies/learned_keys/learned_keys.ini),
                                               per seed and over seeds
  learned_keys_theory.csv                      `memcap theory` on the summary: the grid's
                                               models beside the measurements
  learned_keys_check.csv                       the training-sufficiency cells, twice the steps
                                               (scripts/studies/learned_keys/learned_keys_check.ini)
Writes figures/learned_keys_*.png. Without the study's CSVs it returns no lines.

Capacity: for each memory, budget, noise, key source and V/n, n* where mean accuracy over seeds
crosses 90%, interpolated in log n between the n tried (memcap_report.crossing: the last downward
crossing), with a 95% interval from a bootstrap over the study's own scored seeds (the per-seed
rows of learned_keys.csv; `<a`: the smallest n tried misses; `≥b`: every n tried passes). A curve
here spans several task specs (V = r·n names a different vocabulary at each n), so the sweep's
crossing rounds cannot refine it: its n are the config's. Ratios (learned / random keys) carry a
paired interval: the same seed numbers, budget and n. Every number and sentence is a
deterministic function of the CSVs.
"""
import math
import os
import sys
from collections import defaultdict

from memcap_report import crossing
from memcap_report.capacity import resolved_line
from memcap_report.common import CATALOG, SUMMARY_COLUMNS, Context, run, base, noise_words as common_noise_words, param, read_csv, se

CELL_COLUMNS = ("memory_spec", "task_spec", "budget_floats", "d", "n", "seed", "queries", "accuracy_frac", "status")


def noise_of(task_spec):
    return "cosine=" + param(task_spec, "cosine")


def noise_words(noise):
    return common_noise_words(noise, short=True)


def source_of(task_spec, n):
    """(key source, V/n): ('fresh', 0) for vocab = 0, else (keys, vocab / n)."""
    v = int(param(task_spec, "vocab"))
    if v == 0:
        return "fresh", 0
    return param(task_spec, "keys"), v // int(n)


def steps_of(task_spec):
    return int(param(task_spec, "steps"))


def study_steps(summary):
    """The study's training steps: the fewest in its summary (rows with more are checks)."""
    return min(steps_of(r["task_spec"]) for r in summary)


def capacity(points, seeds=None):
    """points: sorted [(n, mean, se, row)] of one curve. Returns (value, kind, estimate, curve): n* at 0.9
    (crossing's rule), kind '=' inside the n tried, '<' below the smallest (value: the smallest), '>=' every
    n passes (value: the largest); the crossing.Estimate with its 95% interval over `seeds` (the study's
    per-seed index; None or a missing cell: no interval) and the crossing.Curve, for paired ratios."""
    curve = crossing.Curve([p[0] for p in points], [[[p[3]]] for p in points], seeds or {})
    est = crossing.estimates(curve, (0.9,))[0.9]
    if est.value == float("-inf"):
        return points[0][0], "<", est, curve
    if est.value == float("inf"):
        return points[-1][0], ">=", est, curve
    return est.value, "=", est, curve


def fmt_cap(c):
    """n* [95% interval] ('57 [52, 63]'), '<16', '≥1024'."""
    return crossing.fmt_est(c[2])


def cap_ratio(lc, rc):
    """crossing.Ratio of capacity lc's n* over rc's (paired: the same seeds), or None where either is below
    the n tried or both are beyond them."""
    if lc[1] == "<" or rc[1] == "<" or (lc[1] == ">=" and rc[1] == ">="):
        return None
    return crossing.ratio(lc[3], rc[3])


def ratio_text(lc, rc):
    """learned / random n*, with its paired interval ('×1.45 [1.30, 1.62]', '≥×1.20 [...]' from a lower
    bound), '(a tie)' where the interval holds 1; '—' where no ratio is measured."""
    r = cap_ratio(lc, rc)
    if r is None:
        return "—"
    return crossing.fmt_ratio(r) + (" (a tie)" if r.tie() else "")


def interval_of(c):
    """(n*, lo, hi) of a capacity; a bound (or no interval) gives its value for both ends."""
    e = c[2]
    if e.lo is None or not e.finite or not (math.isfinite(e.lo) and math.isfinite(e.hi)):
        return (c[0], c[0], c[0])
    return (c[0], e.lo, e.hi)


def frontier_point(r):
    """(n*, lo, hi, text) of a capacity_table.csv row at 0.9 (its n_star columns; a table without them: the
    power-of-two capacity, no interval)."""
    v = r.get("n_star_0.9", "")
    if v in ("", None):
        c = float(r["capacity_at_0.9"])
        return (c, c, c, "%d" % c)
    lo, hi = r.get("n_star_0.9_lo", ""), r.get("n_star_0.9_hi", "")
    top = float(r["largest_tried"])
    val = {"inf": top}.get(v, None)
    if val is not None:
        return (val, val, val, "≥%d" % top)
    if v == "-inf":
        return (0.0, 0.0, 0.0, "<?")
    e = crossing.Estimate(float(v), None if lo == "" else float(lo.replace("inf", "inf")),
                          None if hi == "" else float(hi), None, int(top))
    lo_, hi_ = (e.lo, e.hi) if e.lo is not None and math.isfinite(e.lo) and math.isfinite(e.hi) else (e.value, e.value)
    return (e.value, lo_, hi_, crossing.fmt_est(e))


def against_cache(fixed, cache):
    """The fixed-state memory's (n*, lo, hi) against the cache's (n*, lo, hi, text): 'short of the cache' where
    its interval lies below the cache's, 'more than the cache' above it, else 'level with the cache within the
    intervals'."""
    if cache is None:
        return "no cache to compare"
    if fixed[2] < cache[1]:
        return "short of the cache"
    if fixed[1] > cache[2]:
        return "more than the cache"
    return "level with the cache within the intervals"


def ratio_span(pairs):
    """'×1.20 [1.05, 1.31] to ×1.92 [1.70, 2.10]' over [(learned cap, random cap)] (cap_ratio's), the smallest
    and largest by value; '' where none is measured."""
    rs = [r for r in (cap_ratio(a, b) for a, b in pairs) if r is not None]
    if not rs:
        return ""
    lo, hi = min(rs, key=lambda r: r.value), max(rs, key=lambda r: r.value)
    return crossing.fmt_ratio(lo) if lo is hi else "%s to %s" % (crossing.fmt_ratio(lo), crossing.fmt_ratio(hi))


def read(out):
    d = os.path.join(out, "learned_keys")
    need = ["learned_keys_summary.csv", "learned_keys.csv"]
    if not all(os.path.exists(os.path.join(d, f)) for f in need):
        return None
    summary = read_csv(os.path.join(d, "learned_keys_summary.csv"), SUMMARY_COLUMNS)
    cells = read_csv(os.path.join(d, "learned_keys.csv"), CELL_COLUMNS)
    theory = read_csv(os.path.join(d, "learned_keys_theory.csv")) if os.path.exists(
        os.path.join(d, "learned_keys_theory.csv")) else []
    check = read_csv(os.path.join(d, "learned_keys_check.csv"), CELL_COLUMNS) if os.path.exists(
        os.path.join(d, "learned_keys_check.csv")) else []
    # the study's own per-seed rows: each n* is bootstrapped over the seeds its summary's means are over
    seeds = crossing.read_seeds(os.path.join(d, "learned_keys.csv"))
    return summary, cells, theory, check, seeds


def groups(summary, steps):
    """(memory, budget, d, noise, source, ratio) -> sorted [(n, mean, se, row)] of the default training: one
    capacity curve each."""
    g = defaultdict(list)
    for r in summary:
        if steps_of(r["task_spec"]) != steps:
            continue
        src, ratio = source_of(r["task_spec"], r["n"])
        key = (base(r["memory_spec"]), int(r["budget_floats"]), int(r["d"]), noise_of(r["task_spec"]), src, ratio)
        g[key].append((int(r["n"]), float(r["accuracy_mean_frac"]), se(r), r))
    for k in g:
        g[k].sort()
    return g


def capacity_table(g, seeds=None):
    """Rows: (memory, budget, d, noise, ratio, fresh cap, random cap, frame cap, learned cap, ratio text); each
    cap capacity()'s, its interval over `seeds`."""
    rows = []
    keys = sorted({(m, b, d, nz, ratio) for (m, b, d, nz, src, ratio) in g if src != "fresh"},
                  key=lambda k: (order().index(k[0]) if k[0] in order() else 99, k[1], k[3] != "cosine=1", k[4]))
    for m, b, d, nz, ratio in keys:
        cap = {}
        for src in ("random", "frame", "learned"):
            pts = g.get((m, b, d, nz, src, ratio))
            cap[src] = capacity(pts, seeds) if pts else None
        fresh = g.get((m, b, d, nz, "fresh", 0))
        fcap = capacity(fresh, seeds) if fresh else None
        rt = ratio_text(cap["learned"], cap["random"]) if cap["learned"] and cap["random"] else ""
        rows.append((m, b, d, nz, ratio, fcap, cap["random"], cap["frame"], cap["learned"], rt))
    return rows


# The study asks how far trained keys raise each fixed-state memory's capacity, against the
# cache (a state that grows with n) and, for the grid, against its models: these are the
# backends its sentences are about; its tables and panels list memories in the catalog's order.
CACHE, GRID, DELTA_RULE = "softmax", "linear", "delta"


def order():
    """The catalog's memories, in its order (memcap list's)."""
    return list(CATALOG["memories"])


def memories(g):
    """The study's memories: in the catalog's order, then any other in order of appearance."""
    seen = list(dict.fromkeys(k[0] for k in g))
    known = order()
    return [m for m in known if m in seen] + [m for m in seen if m not in known]


def gains(g):
    """Per (memory, budget, noise, ratio, n): learned − random accuracy (points) and its SE, with V/d."""
    out = []
    for (m, b, d, nz, src, ratio), pts in g.items():
        if src != "learned":
            continue
        rnd = {n: (mean, se) for n, mean, se, _ in g.get((m, b, d, nz, "random", ratio), [])}
        for n, mean, se, _ in pts:
            if n in rnd:
                rm, rse = rnd[n]
                out.append(dict(memory=m, budget=b, d=d, noise=nz, ratio=ratio, n=n, v_over_d=ratio * n / d,
                                gain=100 * (mean - rm), se=100 * math.sqrt(se * se + rse * rse), random=rm, learned=mean))
    return out


def figures(g, gs, figdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = []
    mems = memories(g)
    # accuracy against n, V = n, no noise, each memory at its largest budget in the study
    fig, axes = plt.subplots(1, len(mems), figsize=(3.2 * len(mems), 3.0), squeeze=False)
    for ax, m in zip(axes[0], mems):
        b = max(k[1] for k in g if k[0] == m)
        for src, style in (("random", "o-"), ("frame", "s--"), ("learned", "^-")):
            k = next((k for k in g if k[0] == m and k[1] == b and k[3] == "cosine=1" and k[4] == src and k[5] == 1), None)
            if k is None:
                continue
            pts = g[k]
            ax.errorbar([p[0] for p in pts], [100 * p[1] for p in pts], yerr=[196 * p[2] for p in pts],
                        fmt=style, ms=4, capsize=2, label="%s keys" % src)
        ax.axhline(90, color="grey", lw=0.6, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_title("%s, B = %d, d = %d" % (m, b, k[2]) if k else m, fontsize=9)
        ax.set_xlabel("n (V = n)")
        ax.set_ylim(0, 102)
    axes[0][0].set_ylabel("accuracy (%), 95% interval")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(figdir, "learned_keys_accuracy.png"), dpi=110)
    plt.close(fig)
    names.append("learned_keys_accuracy.png")
    # gain against V/d; one colour per memory in both panels (selective, at rho = 1 without a
    # salience feature, is the linear grid: its points lie on linear's)
    colour = {m: "C%d" % i for i, m in enumerate(mems)}
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for ax, nz in zip(axes, ("cosine=1", "cosine=0.72")):
        for m in mems:
            xs = [x for x in gs if x["memory"] == m and x["noise"] == nz and x["random"] < 0.995]
            if not xs:
                continue
            xs.sort(key=lambda x: x["v_over_d"])
            ax.errorbar([x["v_over_d"] for x in xs], [x["gain"] for x in xs], yerr=[1.96 * x["se"] for x in xs],
                        fmt="o" if m != "selective" else "x", ms=3, capsize=1.5, label=m, color=colour[m])
        ax.axhline(0, color="grey", lw=0.6)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("V / d")
        ax.set_title(noise_words(nz), fontsize=9)
    axes[0].set_ylabel("learned − random keys (points)")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(figdir, "learned_keys_gain.png"), dpi=110)
    plt.close(fig)
    names.append("learned_keys_gain.png")
    return names


def check_lines(cells, check, steps):
    """Training sufficiency: the check's cells (twice the steps) against the same cells at the
    default steps, per seed; verdict |mean difference| ≤ 1.96 × its SE (the paired seeds' spread,
    floored by the binomial SE of a difference of two seeds' query counts)."""
    if not check:
        return ["Training sufficiency: not measured (learned_keys_check.csv missing)."], None
    key = lambda r: (r["memory_spec"], r["budget_floats"], r["d"], r["n"],
                     ",".join(kv for kv in r["task_spec"].split(":", 1)[1].split(",") if not kv.startswith("steps=")))
    base_rows = {(key(r), r["seed"]): r for r in cells if steps_of(r["task_spec"]) == steps}
    more = sorted({steps_of(r["task_spec"]) for r in check})
    diffs = defaultdict(list)
    for r in check:
        b = base_rows.get((key(r), r["seed"]))
        if b is None or r["status"] != "ok" or b["status"] != "ok":
            continue
        diffs[key(r)].append((float(r["accuracy_frac"]), float(b["accuracy_frac"]), int(r["queries"])))
    lines = ["| memory | B | d | n | noise | %d steps | %s steps | difference (points) | SE | within 1.96 SE |" % (
                 steps, "/".join(str(x) for x in more)),
             "|---|---:|---:|---:|---|---:|---:|---:|---:|---|"]
    worst = 0.0
    outside = 0
    moved = []
    for k, xs in diffs.items():
        s = len(xs)
        dd = [a - b for a, b, _ in xs]
        mean = sum(dd) / s
        sd = math.sqrt(sum((x - mean) ** 2 for x in dd) / (s - 1)) if s > 1 else 0.0
        p = min(max(sum(b for _, b, _ in xs) / s, 1 / xs[0][2]), 1 - 1 / xs[0][2])
        floor = math.sqrt(2 * p * (1 - p) / xs[0][2])
        se = max(sd, floor) / math.sqrt(s)
        ok = abs(mean) <= 1.96 * se
        outside += not ok
        if not ok:
            moved.append("%s at B = %s, n = %s, %s: %+.1f points" % (
                base(k[0]), k[1], k[3], noise_words("cosine=" + param("x:" + k[4], "cosine")), 100 * mean))
        worst = max(worst, abs(mean) / se if se > 0 else 0.0)
        m, b, d, n, task = k
        lines.append("| %s | %s | %s | %s | %s | %.1f | %.1f | %+.1f | %.1f | %s |" % (
            base(m), b, d, n, noise_words("cosine=" + param("x:" + task, "cosine")),
            100 * sum(b for _, b, _ in xs) / s, 100 * sum(a for a, _, _ in xs) / s, 100 * mean, 100 * se,
            "yes" if ok else "**no**"))
    return lines, (len(diffs), outside, worst, moved)


def theory_lines(theory):
    rows = [t for t in theory if t["applies"] != "no" and t["model_accuracy_frac"]
            and t["model"] in ("grid_recall", "keyset_grid_recall")]
    if not rows:
        return ["(no theory rows)"], None
    by = defaultdict(list)
    for t in rows:
        src, _ = source_of(t["task_spec"], t["n"])
        by[(t["model"], src)].append(t)
    lines = ["| model | keys | rows | largest \\|residual\\| (points) | rows beyond 3 SE | mean residual (points) |",
             "|---|---|---:|---:|---:|---:|"]
    stats = {}
    for (model, src), ts in sorted(by.items()):
        res = [float(t["residual_points"]) for t in ts]
        big = sum(1 for t in ts if abs(float(t["residual_se"])) > 3)
        lines.append("| %s | %s | %d | %.1f | %d | %+.2f |" % (model, src, len(ts), max(abs(x) for x in res), big,
                                                             sum(res) / len(res)))
        stats[(model, src)] = (len(ts), max(abs(x) for x in res), big)
    return lines, stats


def load(ctx):
    """read's tuple; None when the study's CSVs are not there."""
    return read(ctx.reports_dir)


def compute(data):
    """Plain rows: none of its own yet (the tables are computed in render)."""
    return []


def render(data, rows_, ctx):
    figdir, frontier_table = ctx.figures, ctx.table
    summary, cells, theory, check, seeds_index = data
    steps = study_steps(summary)
    g = groups(summary, steps)
    table = capacity_table(g, seeds_index)
    resolution = resolved_line([{"nstar": {0.9: capacity(pts, seeds_index)[2]}} for pts in g.values()], "Resolution")
    gs = gains(g)
    figs = figures(g, gs, figdir)
    seeds = sorted({r["seeds"] for r in summary}, key=int)
    errors = sum(int(r["errors"]) for r in summary)

    lines = ["## Learned keys: how far training raises a fixed state's capacity", "",
             "Associative recall over a vocabulary of V symbols (`assoc_recall:vocab=V`): each episode stores n "
             "distinct symbols with fresh random values; the keys are random (a Gaussian table per seed), a "
             "tight frame (the Welch bound), or learned (the table trained per cell through the memory's own "
             "write and read on training episodes, then scored on the test episodes). Each memory at a fixed "
             "width, the noise-free frontier's choice at that budget; %s seeds; %d error rows. Config: "
             "`scripts/studies/learned_keys/learned_keys.ini`, commands and cost in `reports/learned_keys/README.md`, "
             "method in `docs/learned-keys.md`." % ("/".join(seeds), errors), ""]
    lines += ["![accuracy against n](figures/%s)" % figs[0], "", "![gain against V/d](figures/%s)" % figs[1], ""]

    lines += ["**Capacity at 90%**: n* [95% interval] in stored pairs, where mean accuracy crosses 90%, "
              "interpolated in log n between the n tried, the interval from a bootstrap over the study's scored seeds "
              "(fresh = V = 0, new Gaussian keys every episode; learned/random: the ratio of their n* at the same V/n, "
              "with its paired 95% interval, a tie where it holds 1). The n tried are the config's (a block per n: "
              "V = r·n names another task at each n, so no crossing rounds refine them), and the intervals are as "
              "wide as 10 seeds and that grid leave them.", "", resolution, "",
              "| memory | B | d | noise | V/n | fresh | random | frame | learned | learned/random |",
              "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for m, b, d, nz, ratio, fcap, rc, fc, lc, rt in table:
        lines.append("| %s | %d | %d | %s | %d | %s | %s | %s | %s | %s |" % (
            m, b, d, noise_words(nz), ratio, fmt_cap(fcap) if fcap else "", fmt_cap(rc) if rc else "",
            fmt_cap(fc) if fc else "", fmt_cap(lc) if lc else "", rt))
    lines.append("")

    # selective at rho = 1 without a salience feature writes exactly as the linear grid
    same = [(k, v) for k, v in g.items() if k[0] == "selective" and (GRID,) + k[1:] in g]
    if same and all([(n, m) for n, m, _, _ in v] == [(n, m) for n, m, _, _ in g[(GRID,) + k[1:]]] for k, v in same):
        lines += ["The selective model's rows equal the linear grid's in every one of its %d groups: on this task "
                  "no salience feature is declared, so its step is 1 and, at rho = 1, it is the linear grid (with "
                  "the same feature map); it is kept as a check that training sees the same memory the same way."
                  % len(same), ""]

    # --- words: how far training raises each memory's capacity
    words = []
    for m in memories(g):
        mine = [t for t in table if t[0] == m and t[6] and t[8]]
        exact = [(t, t[8][0] / t[6][0]) for t in mine if t[8][1] == "=" and t[6][1] == "="]
        lower = [(t, t[8][0] / t[6][0]) for t in mine if t[8][1] == ">=" and t[6][1] == "="]
        best = max(exact + lower, key=lambda x: x[1], default=None)
        gm = [x for x in gs if x["memory"] == m and x["random"] < 0.995]
        sig = [x for x in gm if x["gain"] > 1.96 * x["se"]]
        neg = [x for x in gm if x["gain"] < -1.96 * x["se"]]
        text = "- **%s**: " % m
        if best:
            t, r = best
            text += "the largest learned/random n* ratio is %s (B = %d, %s, V = %dn)" % (
                ratio_text(t[8], t[6]), t[1], noise_words(t[3]), t[4])
        else:
            text += "no learned/random capacity ratio is bounded on the n tried"
        text += "; of %d (n, V) cells where random keys read below 99.5%%, learned keys read higher beyond " \
                "1.96 SE in %d and lower in %d" % (len(gm), len(sig), len(neg))
        if gm:
            top = max(gm, key=lambda x: x["gain"])
            text += " (largest gain %+.1f ± %.1f points at B = %d, n = %d, V/d = %g, %s)" % (
                top["gain"], top["se"], top["budget"], top["n"], top["v_over_d"], noise_words(top["noise"]))
        words.append(text + ".")
    lines += ["**How far training raises each memory's capacity at equal state:**", ""] + words + [""]

    # --- how the gain falls with V/d
    bands = [(0, 2), (2, 8), (8, 32), (32, 1e9)]
    blines = ["| memory | noise | " + " | ".join("V/d in [%g, %s)" % (lo, "∞" if hi > 1e8 else "%g" % hi) for lo, hi in bands) + " |",
              "|---|---|" + "---:|" * len(bands)]
    for m in memories(g):
        for nz in ("cosine=1", "cosine=0.72"):
            xs = [x for x in gs if x["memory"] == m and x["noise"] == nz and x["random"] < 0.995]
            if not xs:
                continue
            cells_ = []
            for lo, hi in bands:
                b_ = [x["gain"] for x in xs if lo <= x["v_over_d"] < hi]
                cells_.append("%+.1f (%d)" % (sum(b_) / len(b_), len(b_)) if b_ else "")
            blines.append("| %s | %s | %s |" % (m, noise_words(nz), " | ".join(cells_)))
    lines += ["**How the gain falls with V/d** — mean learned − random accuracy (points) over the (n, V) cells in "
              "each band where random keys read below 99.5% (cells in parentheses):", ""] + blines + [""]

    # --- parity with the cache: the cache's capacity in this study (its fixed width, any keys)
    # and, where the main job's table is there, at its own best width and beta (frontier)
    frontier = {}
    path = frontier_table
    if path and os.path.exists(path):
        for r in read_csv(path):
            if base(r["memory_spec"]) == CACHE and r["frame"] == "frontier" and r["task"] == "assoc_recall" \
                    and r["capacity_at_0.9"]:
                frontier[(int(r["budget_floats"]), r["noise"])] = frontier_point(r)
    par, parity = [], []
    for b in sorted({k[1] for k in g}):
        for nz in ("cosine=1", "cosine=0.72"):
            cache = [t for t in table if t[0] == CACHE and t[1] == b and t[3] == nz]
            fixed = [t for t in table if t[0] != CACHE and t[1] == b and t[3] == nz and t[8] and t[8][1] != "<"]
            if not cache or not fixed:
                continue
            caps = [c for t in cache for c in (t[5], t[6], t[7], t[8]) if c and c[1] != "<"]
            here = max(caps, key=lambda c: (c[0], c[1] == ">=")) if caps else None
            # the cache's best: (n*, lo, hi, text) of this study's cells and of the frontier's point
            pts = ([interval_of(here) + (fmt_cap(here),)] if here else []) + (
                [frontier[(b, nz)]] if (b, nz) in frontier else [])
            best_cache = max(pts, key=lambda p: p[0]) if pts else None
            bestf = max(fixed, key=lambda t: (t[8][0], t[8][1] == ">="))
            where = []
            if here:
                where.append("%s at d = %d in this study" % (fmt_cap(here), cache[0][2]))
            else:
                where.append("below the smallest n tried at d = %d in this study" % cache[0][2])
            if (b, nz) in frontier:
                where.append("%s at its best width and beta (the frontier, reports/capacity_table.csv)" % frontier[(b, nz)][3])
            verdict = against_cache(interval_of(bestf[8]), best_cache)
            reach = verdict != "short of the cache"
            parity.append((b, nz, reach, bestf[0], bestf[8], best_cache[3] if best_cache else "—", verdict))
            par.append("- B = %d, %s: the cache holds %s; the best fixed-state memory with learned keys, %s at V = %dn, "
                       "holds %s — %s." % (b, noise_words(nz), "; ".join(where), bestf[0], bestf[4], fmt_cap(bestf[8]),
                                           verdict))
    lines += ["**Equal-memory parity** (n* at equal floats; short of the cache where the two 95% intervals do not "
              "overlap and the cache's is above, more where the fixed state's is above, level otherwise — the two "
              "come from different sweeps, so no paired ratio):", ""] + par + [""]

    # --- delta's "several times d"
    delta = [t for t in table if t[0] == DELTA_RULE and t[8]]
    delta_top = None
    if delta:
        top = max(delta, key=lambda t: t[8][0] / t[2])
        delta_top = (top[8][0] / top[2], top[8][1])
        e = top[8][2]
        span = (" [%.2f, %.2f]" % (e.lo / top[2], e.hi / top[2])
                if e.lo is not None and e.finite and math.isfinite(e.lo) and math.isfinite(e.hi) else "")
        dl = ("The delta rule's largest n* with learned keys is %s pairs at d = %d (B = %d, %s, V = %dn): %s%.2f%s d. "
              % (fmt_cap(top[8]), top[2], top[1], noise_words(top[3]), top[4], "≥" if top[8][1] == ">=" else "",
                 top[8][0] / top[2], span))
        dl += ("The published \"several times d\" %s here." % ("appears" if top[8][0] >= 2 * top[2] else "does not appear"))
        lines += ["**The delta rule's \"several times d\":** " + dl, ""]

    # --- theory
    tl, tstats = theory_lines(theory)
    lines += ["**Theory beside measurement, the grid** (`memcap theory` on the summary: `grid_recall` for random "
              "keys, section 2 of memories/theory.hpp; `keyset_grid_recall` for the frame, section 4; residual = "
              "model − measured):", ""] + tl + [""]

    # --- training sufficiency
    cl, cstats = check_lines(cells, check, steps)
    lines += ["**Training is not the limit**: the largest cells again with twice the Adam steps and training "
              "episodes (`scripts/studies/learned_keys/learned_keys_check.ini`), seed by seed against the default:", ""] + cl + [""]

    # --- the answer in three sentences
    ans = answer(table, gs, cstats, parity, delta_top)
    lines += ["**The answer.** " + ans, ""]
    return lines


def answer(table, gs, cstats, parity, delta_top):
    grid = [t for t in table if t[0] == GRID and t[6] and t[8] and t[6][1] == "=" and t[8][1] in ("=", ">=")]
    s1 = ""
    if grid:
        r1 = ratio_span([(t[8], t[6]) for t in grid if t[4] == 1])
        rmax = ratio_span([(t[8], t[6]) for t in grid if t[4] == max(x[4] for x in grid)])
        if r1 and rmax:
            s1 = ("Training the keys multiplies the grid's n* at equal state by %s (paired 95%% intervals) when the "
                  "vocabulary is the stored set (V = n) and by %s at V = %dn; " %
                  (r1, rmax, max(x[4] for x in grid)))
    fixed = [x for x in gs if x["memory"] != CACHE and x["random"] < 0.995]
    small = [x["gain"] for x in fixed if x["v_over_d"] < 8]
    large = [x["gain"] for x in fixed if x["v_over_d"] >= 32]
    s1 += ("over all fixed-state memories the mean accuracy gain falls from %+.1f points at V/d < 8 to %+.1f at "
           "V/d ≥ 32." % (sum(small) / len(small) if small else float("nan"),
                          sum(large) / len(large) if large else float("nan")))
    others = []
    for m in [x for x in order() if x not in (CACHE, GRID)]:
        ms = [t for t in table if t[0] == m and t[6] and t[8] and t[6][1] == "=" and t[8][1] == "="]
        span = ratio_span([(t[8], t[6]) for t in ms])
        if span:
            others.append("%s %s" % (m, span))
    s2 = "It is a different curve per memory (learned/random n* where both are inside the n tried: %s)" % (
        "; ".join(others) if others else "none bounded")
    if delta_top:
        s2 += ", and the delta rule with learned keys holds at most %s%.2f d pairs, not several times d" % (
            "≥" if delta_top[1] == ">=" else "", delta_top[0]) if delta_top[0] < 2 else \
            ", and the delta rule with learned keys holds %s%.2f d pairs%s" % (
                "≥" if delta_top[1] == ">=" else "", delta_top[0],
                " (every n tried passes: a lower bound)" if delta_top[1] == ">=" else "")
    s2 += "."
    quiet = [p for p in parity if p[1] == "cosine=1"]
    noisy = [p for p in parity if p[1] != "cosine=1"]
    s3 = ""
    if quiet:
        s3 = ("Without query noise no fixed-state memory with learned keys reaches the cache's n* at equal floats "
              "(its interval lies below the cache's: %s)" % "; ".join("B = %d: %s %s against %s" % (b, m, fmt_cap(c), cc) for b, _, r, m, c, cc, _ in quiet)
              if not any(p[2] for p in quiet) else
              "Without query noise a fixed-state memory with learned keys reaches the cache's n* (within the "
              "intervals) at %s" %
              ", ".join("B = %d" % p[0] for p in quiet if p[2]))
        if noisy:
            s3 += ("; at cosine 0.72 %s" % ("the best of them reaches the cache's n* (%s)"
                                            % "; ".join("B = %d: %s %s against %s, %s" % (b, m, fmt_cap(c), cc, v)
                                                        for b, _, r, m, c, cc, v in noisy if r)
                                            if any(p[2] for p in noisy) else "none does"))
        s3 += "."
    if cstats:
        n_, outside, worst, moved = cstats
        s3 += (" Doubling the training moved %d of %d checked cells by more than 1.96 SE (largest %.1f SE%s), so "
               "training is not what limits these capacities%s." % (
                   outside, n_, worst, "" if not moved else ": " + "; ".join(moved),
                   "" if not moved else " (a cell that moves down with more training is not under-trained)"
                   if all("-" in m.split(": ")[-1] for m in moved) else " except where a cell moved up"))
    return s1 + " " + s2 + " " + s3


def section(out, figdir, frontier_table=None):
    """The section's lines ([] without the study's CSVs)."""
    return run(sys.modules[__name__], Context(out, figdir, table=frontier_table))


def readme(data, rows_, ctx):
    """reports/learned_keys/README.md's computed parts (its template: README.md.in): the rows (cell and
    seed) of each sweep's CSV, the timing table's cell counts."""
    summary, cells, _, check, seeds_index = data
    g = groups(summary, study_steps(summary))
    resolution = resolved_line([{"nstar": {0.9: capacity(pts, seeds_index)[2]}} for pts in g.values()], "Resolution")
    return {"cells": str(len(cells)), "check_cells": str(len(check)) if check else "—", "resolution": resolution}
