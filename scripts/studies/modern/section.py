"""Today's recurrent memories (modern/modern_summary.csv, from scripts/studies/modern/modern.ini): the
frontier's capacity of RetNet, GLA, Gated DeltaNet, KDA, RWKV-7, MesaNet and Based beside the
cache, the linear grid and DeltaNet, each at the width and settings the race chose, by its
published name; which recurrent memory stores the most at each budget and noise, and how far
it is from the cache."""
import os
import sys
from collections import OrderedDict

from memcap_report.crossing import load_seeds, read_seeds
from memcap_report.capacity import cap_text, capacity_rows, nstar, resolved_line
from memcap_report.crossing import fmt_ratio, ratio
from memcap_report.common import (Context, caches, run, SUMMARY_COLUMNS, base, fmt_cap, label, list_words, name_order, noise_order, noise_words, span_words,
                                  optional_csv, read_manifest, spec_params)
from memcap_report.race import at_end, edge_words, settings
from memcap_report.verdict import plain_rows


def table(summary, manifest=None, seeds=None):
    """(lines, caps, edges): the Markdown table, {(memory, noise, budget): capacity row}, and the
    settings chosen at an end of their candidates {(memory, key, value, end): [budgets]}. `seeds`:
    the study's own per-seed index (crossing.read_seeds of modern.csv), so a cell the main job's
    sweep also ran (with other seeds near its crossing) is bootstrapped over this study's seeds,
    the ones its summary's means are over; None: every per-seed CSV loaded."""
    rows, _ = capacity_rows(summary, "frontier", seeds)
    rows = [r for r in rows if r["task"] == "assoc_recall"]
    caps = {(base(r["memory_spec"]), r["noise"], r["budget_floats"]): r for r in rows}
    memories = name_order(m for m, _, _ in caps)
    noises = noise_order({n for _, n, _ in caps})
    budgets = sorted({b for _, _, b in caps})
    head = "| memory | " + " | ".join("%s, %d floats" % (noise_words(n), b) for n in noises for b in budgets) + " |"
    lines = [head, "|---|" + "---|" * (len(noises) * len(budgets))]
    edges = OrderedDict()
    for m in memories:
        cells = []
        for n in noises:
            for b in budgets:
                r = caps.get((m, n, b))
                if r is None:
                    cells.append("—")
                    continue
                s = settings(r, manifest, edges)
                cells.append(cap_text(r) + (" (%s)" % s if s else ""))
        lines.append("| %s | %s |" % (label(m), " | ".join(cells)))
    return lines, caps, edges


def leaders(caps):
    """Per (noise, budget): the recurrent memories with the largest n* (and those tied with it: a paired
    ratio interval holding 1), the first's row, the cache's row."""
    out = OrderedDict()
    for noise in noise_order({n for _, n, _ in caps}):
        for b in sorted({bb for _, nn, bb in caps if nn == noise}):
            rec = {m: r for (m, n, bb), r in caps.items() if n == noise and bb == b and m not in caches()}
            if not rec:
                continue
            first = max(rec, key=lambda m: nstar(rec[m]))
            top = [m for m in rec if m == first or (nstar(rec[m]) > 0 and ratio(rec[first]["curve"], rec[m]["curve"]).tie())]
            cache = next((caps[(c, noise, b)] for c in caches() if (c, noise, b) in caps), None)
            out[(noise, b)] = (top, rec[first], cache)
    return out


def answer(lead):
    """Two sentences: which recurrent memories store the most, and how far from the cache."""
    if not lead:
        return ""
    wins = OrderedDict()
    for (noise, b), (ms, top, cache) in lead.items():
        for m in ms:
            wins[m] = wins.get(m, 0) + 1
    most = max(wins.values())
    best = [m for m, w in wins.items() if w == most]
    ratios = ["%s at %d floats: %s against the cache's %s (%s)" % (
        noise_words(n), b, cap_text(top), cap_text(cache), fmt_ratio(ratio(top["curve"], cache["curve"])))
        for (n, b), (ms, top, cache) in lead.items() if cache]
    return ("Of the recurrent memories, %s ha%s the largest n* at %d of the %d (noise, budget) points (ties — a "
            "paired ratio interval holding 1 — included). Their largest n* beside the cache's (ratio, paired 95%% "
            "interval): %s." %
            (list_words([label(m) for m in best]), "s" if len(best) == 1 else "ve", most, len(lead), "; ".join(ratios)))


def load(ctx):
    """The study's summary and manifest; None when modern/modern_summary.csv is not there."""
    per_seed = os.path.join(ctx.reports_dir, "modern", "modern.csv")
    load_seeds(per_seed)  # per seed: the crossings' intervals (crossing.SEEDS)
    summary = optional_csv(os.path.join(ctx.reports_dir, "modern", "modern_summary.csv"), SUMMARY_COLUMNS)
    if not summary:
        return None
    seeds = read_seeds(per_seed) if os.path.exists(per_seed) else None
    return {"summary": summary, "seeds": seeds,
            "manifest": read_manifest(os.path.join(ctx.reports_dir, "modern", "modern.csv.manifest.json"))}


def compute(data):
    """Plain rows (memcap_report.verdict): the study's associative-recall capacity points."""
    rows, _ = capacity_rows(data["summary"], "frontier", data.get("seeds"))
    return plain_rows([r for r in rows if r["task"] == "assoc_recall"], "modern")


def render(data, rows, ctx):
    summary, manifest = data["summary"], data["manifest"]
    lines, caps, edges = table(summary, manifest, data.get("seeds"))
    seeds = sorted({r["seeds"] for r in summary}, key=int)
    text = ["## Today's recurrent memories", "",
            "Associative recall at equal state floats, every memory at its best width and settings (decays, "
            "steps, ridge, scale: their candidates in `memcap list`), chosen on tuning seeds disjoint from the %s "
            "scored seeds (`scripts/studies/modern/modern.ini`, `reports/modern/`). Capacity: n* [95%% interval], "
            "where mean accuracy crosses 90%%, interpolated in log n, the interval from a bootstrap over the scored "
            "seeds; in brackets the width and settings chosen at the largest n passing. `≥` marks the largest n "
            "tried, `<` the smallest." % "/".join(seeds), "", resolved_line(list(caps.values()), "Resolution"), ""]
    return text + lines + ["", edge_words(edges), "", answer(leaders(caps)), ""]


def section(reports_dir):
    """The section's lines ([] when the study's summary is not there)."""
    return run(sys.modules[__name__], Context(reports_dir))


def short(memory):
    """The memory's name in a sentence or a grouped row: its table name without the asides."""
    return label(memory).split(" (")[0].split(" = ")[0]


def readme(data, rows, ctx):
    """reports/modern/README.md's computed parts (its template: README.md.in): the capacity table,
    memories with the same capacity at every point in one row."""
    _, caps, _ = table(data["summary"], data["manifest"], data.get("seeds"))
    noises = noise_order({n for _, n, _ in caps})
    budgets = sorted({b for _, _, b in caps})
    groups = OrderedDict()
    for m in name_order(m for m, _, _ in caps):
        cells = tuple("—" if (m, n, b) not in caps else cap_text(caps[(m, n, b)]) for n in noises for b in budgets)
        groups.setdefault(cells, []).append(m)
    head = "| memory | %s |" % " | ".join("%d%s" % (b, "" if n == "cosine=1" else ", " + noise_words(n, short=True))
                                          for n in noises for b in budgets)
    lines = [head, "|---|" + "---|" * (len(noises) * len(budgets))]
    lines += ["| %s | %s |" % (", ".join(short(m) for m in ms), " | ".join(cells)) for cells, ms in groups.items()]
    return dict(readme_sentences(caps, data["manifest"]), capacity_table="\n".join(lines),
                theory=theory_words(ctx.reports_dir))


def theory_words(reports_dir):
    """The README's sentence on `memcap theory` beside the study (modern/theory.csv): per model that
    applies, the rows it covers and how far the measurements are from it; "" without theory.csv."""
    rows = optional_csv(os.path.join(reports_dir, "modern", "theory.csv"))
    rows = [r for r in rows if r.get("applies") in ("exact", "approx") and r.get("residual_se") not in ("", None)]
    if not rows:
        return ""
    by = OrderedDict()
    for r in rows:
        by.setdefault((r["model"], r["applies"]), OrderedDict()).setdefault(base(r["memory_spec"]), []).append(r)
    out = []
    for (model, applies), per in by.items():
        rs = [r for v in per.values() for r in v]
        se = [abs(float(r["residual_se"])) for r in rs]
        bound = max(1, int(-(-max(se) // 1)))  # the whole number of SE they are all within
        worst = max(rs, key=lambda r: abs(float(r["residual_points"])))
        counts = sorted({len(v) for v in per.values()})
        out.append("`%s` (%s) covers %s: %s row%s%s, all within %d SE (%d%% within 2 SE; the largest residual is "
                   "%.0f points at %.2f SE, measured %.1f%% at d = %s, n = %s)" % (
                       model, applies, list_words(["`%s`" % m for m in per]), span_words(counts),
                       "" if counts == [1] else "s", " each" if len(per) > 1 else "", bound,
                       round(100 * sum(s <= 2 for s in se) / len(se)), abs(float(worst["residual_points"])),
                       abs(float(worst["residual_se"])), 100 * float(worst["measured_mean_frac"]), worst["d"], worst["n"]))
    return "Theory beside it (`theory.csv`, `memcap theory`): " + "; ".join(out) + "."


# ------------------------------------------------------------------ the README's sentences
# The memories the README's sentences are about (the study's own expectations): the grid every
# other fixed state is set against, the cache, and the two that store less than the grid.
GRID, CACHE, MESANET, BASED = "linear", "softmax", "mesanet", "based"
FRACTIONS = {2: "a half", 4: "a quarter", 8: "an eighth", 16: "a sixteenth"}


def noise_phrase(noise):
    return "without noise" if noise == "cosine=1" else "under noise"


def to_grid(caps, memory, noise, b):
    """crossing.Ratio of memory's n* over the grid's at one point (paired), None where either is missing
    or below the smallest n tried."""
    r, g = caps.get((memory, noise, b)), caps.get((GRID, noise, b))
    if r is None or g is None or not nstar(r) or not nstar(g):
        return None
    return ratio(r["curve"], g["curve"])


def ratio_text(rt):
    return ("a tie, " if rt.tie() else "") + fmt_ratio(rt)


def against_grid(caps, memory):
    """Per noise, memory's n* over the grid's at each budget with its paired interval ("a tie" where it
    holds 1): "without noise: a tie, ×0.97 [0.91, 1.03] at 256 floats, ×0.85 [0.80, 0.90] at 4096 floats"."""
    if not any(m == memory for m, _, _ in caps):
        return "(not measured)"
    parts = []
    for noise in noise_order({n for _, n, _ in caps}):
        cells = []
        for b in sorted(b for m, n, b in caps if m == memory and n == noise):
            rt = to_grid(caps, memory, noise, b)
            cells.append("%s at %d floats" % ("— (below the smallest n)" if rt is None else ratio_text(rt), b))
        if cells:
            parts.append("%s: %s" % (noise_phrase(noise), ", ".join(cells)))
    return "; ".join(parts)


def ratios_to_grid(caps, memory):
    """(range, per noise): memory's n* over the grid's, the smallest and largest ratio with their
    intervals, and every ratio by noise (against_grid)."""
    ks = [rt for noise in noise_order({n for _, n, _ in caps})
          for b in sorted(b for m, n, b in caps if m == memory and n == noise)
          for rt in [to_grid(caps, memory, noise, b)] if rt is not None]
    if not ks:
        return "—", "—"
    lo, hi = min(ks, key=lambda r: r.value), max(ks, key=lambda r: r.value)
    rng = fmt_ratio(lo) if lo is hi else "%s to %s" % (fmt_ratio(lo), fmt_ratio(hi))
    return rng, against_grid(caps, memory)


def grid_family(caps):
    """The gated and delta-family memories (every recurrent memory but the grid, MesaNet and Based)
    against the grid: at how many points the paired ratio interval holds 1, and the ratios' range."""
    fam = [m for m in name_order(m for m, _, _ in caps) if m not in caches() + (GRID, MESANET, BASED)]
    rts = [(m, rt) for (m, n, b) in caps if m in fam for rt in [to_grid(caps, m, n, b)] if rt is not None]
    if not rts:
        return "—"
    ties = [rt for _, rt in rts if rt.tie()]
    lo = min(rts, key=lambda x: x[1].value)
    hi = max(rts, key=lambda x: x[1].value)
    return ("%s: their n* over the grid's holds 1 in its paired 95%% interval (a tie) at %d of their %d (memory, "
            "noise, budget) points; the ratios run from %s (%s) to %s (%s)" % (
                list_words([short(m) for m in fam]), len(ties), len(rts), fmt_ratio(lo[1]), short(lo[0]),
                fmt_ratio(hi[1]), short(hi[0])))


def chosen_values(caps, memory, key, noise=None):
    """The values of a setting chosen at memory's capacity points (of one noise, or all)."""
    out = []
    for (m, n, b), r in caps.items():
        if m == memory and (noise is None or n == noise) and r["spec_at_capacity"]:
            v = spec_params(r["spec_at_capacity"]).get(key)
            if v is not None:
                out.append(v)
    return out


def value_span(vs):
    xs = sorted(set(vs), key=float)
    return "—" if not xs else xs[0] if len(xs) == 1 else "%s–%s" % (xs[0], xs[-1])


def readme_sentences(caps, manifest):
    """The numbers of the README's bullets, each computed from the capacity rows."""
    out = {"mesanet_vs_grid": against_grid(caps, MESANET)}
    out["mesanet_ridge"] = " and ".join("λ = %s %s" % (value_span(chosen_values(caps, MESANET, "lambda", n)), noise_phrase(n))
                                        for n in reversed(noise_order({n for _, n, _ in caps}))
                                        if chosen_values(caps, MESANET, "lambda", n)) or "—"
    out["based_range"], out["based_ratios"] = ratios_to_grid(caps, BASED)
    scales = chosen_values(caps, BASED, "scale")
    ends = [v for v in scales if at_end(manifest, BASED, "scale", float(v)) == "highest"]
    out["based_scales"] = ("%s; %s, the end of its candidates, at %d of its %d capacity points" % (
        value_span(scales), ends[0], len(ends), len(scales))) if ends else "%s, inside its candidates" % value_span(scales)
    lead, ties, noisy = [], [], []
    for noise in noise_order({n for _, n, _ in caps}):
        for b in sorted(b for m, n, b in caps if m == CACHE and n == noise):
            rt = to_grid(caps, CACHE, noise, b)
            if rt is None:
                continue
            if noise == "cosine=1":
                lead.append(rt)
            else:
                noisy.append("%s at %d" % (ratio_text(rt), b))
                if rt.tie():
                    ties.append(str(b))
    if lead:
        lo, hi = min(lead, key=lambda r: r.value), max(lead, key=lambda r: r.value)
        out["cache_lead"] = fmt_ratio(lo) if lo is hi else "%s to %s" % (fmt_ratio(lo), fmt_ratio(hi))
    else:
        out["cache_lead"] = "—"
    out["cache_ties"] = "%s (%s)" % ("%s floats" % list_words(ties) if ties else "no budget", "; ".join(noisy) or "—")
    out["grid_family"] = grid_family(caps)
    return out
