"""Today's recurrent memories (modern/modern_summary.csv, from scripts/studies/modern/modern.ini): the
frontier's capacity of RetNet, GLA, Gated DeltaNet, KDA, RWKV-7, MesaNet and Based beside the
cache, the linear grid and DeltaNet, each at the width and settings the race chose, by its
published name; which recurrent memory stores the most at each budget and noise, and how far
it is from the cache."""
import os
import sys
from collections import OrderedDict

from memcap_report.capacity import capacity_rows
from memcap_report.common import (Context, caches, run, SUMMARY_COLUMNS, base, fmt_cap, label, list_words, name_order, noise_order, noise_words, span_words,
                                  optional_csv, read_manifest, spec_params)
from memcap_report.race import at_end, edge_words, settings
from memcap_report.verdict import plain_rows


def table(summary, manifest=None):
    """(lines, caps, edges): the Markdown table, {(memory, noise, budget): capacity row}, and the
    settings chosen at an end of their candidates {(memory, key, value, end): [budgets]}."""
    rows, _ = capacity_rows(summary, "frontier")
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
                cells.append(fmt_cap(r["capacity"], r["largest_tried"], r["smallest_tried"]) + (" (%s)" % s if s else ""))
        lines.append("| %s | %s |" % (label(m), " | ".join(cells)))
    return lines, caps, edges


def leaders(caps):
    """Per (noise, budget): the recurrent memories with the largest capacity, that capacity, the cache's."""
    out = OrderedDict()
    for noise in noise_order({n for _, n, _ in caps}):
        for b in sorted({bb for _, nn, bb in caps if nn == noise}):
            rec = {m: r["capacity"] or 0 for (m, n, bb), r in caps.items() if n == noise and bb == b and m not in caches()}
            if not rec:
                continue
            top = max(rec.values())
            cache = next((caps[(c, noise, b)]["capacity"] for c in caches() if (c, noise, b) in caps), None)
            out[(noise, b)] = ([m for m in rec if rec[m] == top], top, cache)
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
    ratios = ["%s at %d floats: %s against the cache's %s" % (noise_words(n), b, top if top else "<smallest n", cache)
              for (n, b), (ms, top, cache) in lead.items() if cache]
    return ("Of the recurrent memories, %s store%s the most pairs at %d of the %d (noise, budget) points (ties "
            "included). Their largest capacity beside the cache's: %s." %
            (list_words([label(m) for m in best]), "s" if len(best) == 1 else "", most, len(lead), "; ".join(ratios)))


def load(ctx):
    """The study's summary and manifest; None when modern/modern_summary.csv is not there."""
    summary = optional_csv(os.path.join(ctx.reports_dir, "modern", "modern_summary.csv"), SUMMARY_COLUMNS)
    if not summary:
        return None
    return {"summary": summary, "manifest": read_manifest(os.path.join(ctx.reports_dir, "modern", "modern.csv.manifest.json"))}


def compute(data):
    """Plain rows (memcap_report.verdict): the study's associative-recall capacity points."""
    rows, _ = capacity_rows(data["summary"], "frontier")
    return plain_rows([r for r in rows if r["task"] == "assoc_recall"], "modern")


def render(data, rows, ctx):
    summary, manifest = data["summary"], data["manifest"]
    lines, caps, edges = table(summary, manifest)
    seeds = sorted({r["seeds"] for r in summary})
    text = ["## Today's recurrent memories", "",
            "Associative recall at equal state floats, every memory at its best width and settings (decays, "
            "steps, ridge, scale: their candidates in `memcap list`), chosen on tuning seeds disjoint from the %s "
            "scored seeds (`scripts/studies/modern/modern.ini`, `reports/modern/`). Capacity: the largest n with mean "
            "accuracy ≥ 90%%; in brackets the width and settings chosen there. `≥` marks the largest n tried, `<` "
            "the smallest." % "/".join(seeds), ""]
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
    _, caps, _ = table(data["summary"], data["manifest"])
    noises = noise_order({n for _, n, _ in caps})
    budgets = sorted({b for _, _, b in caps})
    groups = OrderedDict()
    for m in name_order(m for m, _, _ in caps):
        cells = tuple("—" if (m, n, b) not in caps else
                      fmt_cap(caps[(m, n, b)]["capacity"], caps[(m, n, b)]["largest_tried"], caps[(m, n, b)]["smallest_tried"])
                      for n in noises for b in budgets)
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


def fraction(a, b):
    """a/b in words: "a half", "a quarter", "1/3", "the same"; b/a ≥ 1 assumed."""
    if a == b:
        return "the same"
    k = b / a
    return FRACTIONS.get(round(k), "1/%g" % k) if abs(k - round(k)) < 1e-9 else "%.2g of" % (a / b)


def noise_phrase(noise):
    return "without noise" if noise == "cosine=1" else "under noise"


def against_grid(caps, memory):
    """Per noise, how memory's capacity compares with the grid's: "equals the grid without noise; under noise
    stores a half as much at 4096 and 16384 floats and fewer (<4 against 4) at 256 floats"."""
    parts = []
    if not any(m == memory for m, _, _ in caps):
        return "(not measured)"
    for noise in noise_order({n for _, n, _ in caps}):
        groups = OrderedDict()
        for b in sorted(b for m, n, b in caps if m == memory and n == noise):
            r, g = caps[(memory, noise, b)], caps.get((GRID, noise, b))
            if g is None:
                continue
            a, c = r["capacity"] or 0, g["capacity"] or 0
            if a == c:
                continue
            what = ("%s as much" % fraction(a, c)).replace("a half as", "half as") if a and c and a < c else ("fewer (%s against %s)" % (
                fmt_cap(r["capacity"], r["largest_tried"], r["smallest_tried"]),
                fmt_cap(g["capacity"], g["largest_tried"], g["smallest_tried"])) if a < c else "more (×%g)" % (a / c))
            groups.setdefault(what, []).append(str(b))
        if not groups:
            parts.append("equals the grid %s" % noise_phrase(noise))
        else:
            parts.append("%s stores %s" % (noise_phrase(noise), " and ".join(
                "%s at %s floats" % (w, list_words(bs)) for w, bs in groups.items())))
    return "; ".join(parts)


def ratios_to_grid(caps, memory):
    """Per noise, memory's capacity as a fraction of the grid's at each budget ("—" where either is below
    the smallest n), and the fractions' range in words."""
    per, ks = [], []
    for noise in noise_order({n for _, n, _ in caps}):
        cells = []
        for b in sorted(b for m, n, b in caps if m == memory and n == noise):
            a, c = caps[(memory, noise, b)]["capacity"], (caps.get((GRID, noise, b)) or {}).get("capacity")
            if a and c:
                cells.append("1/%g" % (c / a) if c > a else "%g" % (a / c))
                ks.append(c / a)
            else:
                cells.append("—")
        per.append("%s %s" % (", ".join(cells), noise_phrase(noise)))
    if not ks:
        return "—", "—"
    lo, hi = min(ks), max(ks)
    rng = fraction(1, lo) if lo == hi else "%s to %s" % (fraction(1, lo), fraction(1, hi))
    return rng, "; ".join(per)


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
    lead, ties = [], []
    for noise in noise_order({n for _, n, _ in caps}):
        for b in sorted(b for m, n, b in caps if m == CACHE and n == noise):
            a, c = caps[(CACHE, noise, b)]["capacity"] or 0, (caps.get((GRID, noise, b)) or {}).get("capacity") or 0
            if noise == "cosine=1" and a and c:
                lead.append(a / c)
            elif noise != "cosine=1" and a == c:
                ties.append(str(b))
    out["cache_lead"] = ("%g–%g×" % (min(lead), max(lead)) if min(lead) != max(lead) else "%g×" % lead[0]) if lead else "—"
    out["cache_ties"] = list_words(ties) if ties else "no budget"
    return out
