"""Where decays, overwrites and gates pay (streams/streams_summary.csv, from scripts/studies/streams/streams.ini):
the tasks whose streams hold more than the pairs asked for (tasks/stream_recall.hpp) and associative
recall written several times (assoc_recall:passes=p), each memory at the width and settings the race
chose, by its published name (the catalog's table names, common.label).

  recent_recall     n = the window W: ratio·W pairs written, the last W asked for; the rows of one cell
                    are lag buckets (slot = the bucket's largest lag): a recall-against-lag curve.
                    Capacity: the largest W whose mean over its lags is >= 0.9. Horizon of one curve:
                    the last lag before the first bucket below 0.9 (common.capacity along "lag").
  overwrite_recall  n = distinct keys; slot 0 = untouched keys, slot 1 = keys written again (right
                    answer: the latest value). Capacity on each slot on its own.
  salient_recall    n = marked pairs among distractors·n unmarked ones; capacity counts marked pairs. Two
                    frames, the same gate for every memory: none gated (the default, every pair written)
                    and every memory gated (gate=all: the task skips the distractors before any write).
  assoc_recall      passes = p: the n pairs written p times; capacity at each p.

What the section holds, every number read from the CSV: the table "which memory when" (per task,
noise and budget the fixed-state memory — any but the cache — that stores the most, all of them when
tied, with the cache beside), the horizons at the largest window and the figure figures/streams_lag.png,
the overwrite accuracies at one n, the capacities per number of passes, and sentences computed from them.
"""
import math
import os
import sys
from collections import OrderedDict

from memcap_report import crossing
from memcap_report.crossing import load_seeds, read_seeds
from memcap_report.crossing import fmt_ratio
from memcap_report.capacity import (compare, nstar, order, resolved_line, at_largest_window, cap_text, part_capacities as shared_part_capacities, part_rows, horizon, lag_curve,
                                    passes, part_of)
from memcap_report.common import (THRESHOLD, Context, caches, run, COLOURS, SUMMARY_COLUMNS, base, fmt_cap, fnum, label, lag_panels, learn_memories, list_words,
                                  measured, name_order, noise_key, noise_order, noise_words, optional_csv, param, ratio_words, read_manifest,
                                  se, spec_params, tuned_keys, tuned_values)
from memcap_report.race import edge_words, settings

FIGURE = "streams_lag.png"
# The study's parts, in its tables' order: (task, part) -> how the tables name it (the parts themselves:
# capacity.part_of, from the catalog's slot parts, a task's passes and its gate).
PART_NAMES = OrderedDict([
    (("recent_recall", ""), "recent_recall (window W)"),
    (("overwrite_recall", "both"), "overwrite_recall (rewritten and untouched keys)"),
    (("overwrite_recall", "rewritten"), "overwrite_recall (rewritten keys)"),
    (("overwrite_recall", "untouched"), "overwrite_recall (untouched keys)"),
    (("salient_recall", ""), "salient_recall (marked pairs, no memory gated)"),
    (("salient_recall", "gate=all"), "salient_recall:gate=all (marked pairs, every memory gated)"),
])
OVERWRITE_SLOTS = {"0": "untouched", "1": "rewritten"}


def part_name(part):
    return PART_NAMES.get(part) or ("%s, %s" % part if part[1] else part[0])


def part_capacities(summary, seeds=None):
    """capacity.part_capacities in the order of PART_NAMES; `seeds`: the study's own per-seed index
    (crossing.read_seeds of streams.csv; None: every per-seed CSV the report loaded)."""
    return shared_part_capacities(summary, PART_NAMES, seeds)
OVERWRITE_AT = 64  # the n of the overwrite table (the closest n tried when it was not)

# ------------------------------------------------------------------ reading

def read(reports_dir):
    """(summary rows, manifest) of the study; ([], {}) when its summary is not there."""
    summary = optional_csv(os.path.join(reports_dir, "streams", "streams_summary.csv"), SUMMARY_COLUMNS)
    manifest = read_manifest(os.path.join(reports_dir, "streams", "streams.csv.manifest.json")) if summary else {}
    return measured(summary), manifest


# ------------------------------------------------------------------ the lag curve

def noise_of(r):
    return noise_key(r["task_spec"])


def memory_order(memories):
    """The published names' order (the cache first), then by name."""
    return name_order(memories)


def row_settings(row, manifest, edges):
    """The width and settings of one summary row ("d=64, gamma=0.99", daggers as modern.settings)."""
    return settings({"capacity": 0, "spec_at_capacity": row["memory_spec"], "d_at_capacity": int(row["d"]),
                     "tuned_keys": tuned_keys(row["tuned"]), "memory_spec": row["memory_spec"],
                     "budget_floats": int(row["budget_floats"])}, manifest, edges)


def cells(rows, key):
    """{key(row): rows} in order of first appearance."""
    out = OrderedDict()
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def horizons(summary, longest=False):
    """{(memory, noise, budget): (W, horizon, curve, row)} for recent_recall: the curve at the largest
    window where the memory's curve is defined, its horizon and a row of it (the settings chosen there).
    longest: instead, the window whose curve reaches the longest horizon (the race chooses a decay per
    window, so a long window's decay can cost the near lags; ties go to the larger window)."""
    rows = [r for r in summary if base(r["task_spec"]) == "recent_recall"]
    out = OrderedDict()
    for k, rs in cells(rows, lambda r: (base(r["memory_spec"]), noise_of(r), int(r["budget_floats"]))).items():
        if not longest:
            w, at = at_largest_window(rs)
            if w is not None:
                curve = lag_curve(at)
                out[k] = (w, horizon(curve), curve, at[0])
            continue
        best = None
        for w, at in sorted(cells(rs, lambda r: int(r["n"])).items()):
            curve = lag_curve(at)
            if curve and (best is None or (horizon(curve) or 0) >= (best[1] or 0)):
                best = (w, horizon(curve), curve, at[0])
        if best:
            out[k] = best
    return out


def streams_figure(hz, path):
    """figures/streams_lag.png: one panel per noise (rows) and budget (columns), one line per memory at
    the largest window it was measured at (its W in the legend when smaller than the panel's largest)."""
    noises = noise_order({n for _, n, _ in hz})
    budgets = sorted({b for _, _, b in hz})
    grid = []
    for noise in noises:
        panels = []
        for b in budgets:
            at = [(m, hz[(m, noise, b)]) for m in memory_order(m for m, n, bb in hz if n == noise and bb == b)]
            top = max((h[0] for _, h in at), default=0)
            lines = [("%s%s" % (m, "" if w == top else " (W=%d)" % w), COLOURS.get(m, "#444444"), curve)
                     for m, (w, _, curve, _) in at]
            panels.append(("%s, %d floats, W = %d" % (noise_words(noise), b, top), lines))
        grid.append(panels)
    lag_panels(grid, path, "recent_recall: recall against lag at the largest window (± 1 SE)")


# ------------------------------------------------------------------ tables

def leaders(caps):
    """{(noise, budget): (fixed-state memories with the largest n* — and every one tied with it: the
    paired ratio interval holds 1 —, that n*, the cache's capacity row or None)} for one part; below the
    smallest n counts 0 (along a lag: the capacity, ties when equal)."""
    out = OrderedDict()
    for noise in noise_order({n for _, n, _ in caps}):
        for b in sorted({bb for _, nn, bb in caps if nn == noise}):
            rec = {m: r for (m, n, bb), r in caps.items() if n == noise and bb == b and m not in caches()}
            cache = next((caps[(c, noise, b)] for c in caches() if (c, noise, b) in caps), None)
            if not rec:
                continue
            first = max(memory_order(rec), key=lambda m: nstar(rec[m]))
            top = nstar(rec[first])
            out[(noise, b)] = ([m for m in memory_order(rec) if m == first or (
                top and nstar(rec[m]) and order(rec[first], rec[m]) == 0) or (not top and not nstar(rec[m]))], top, cache)
    return out


def against(lead_row, cache_row):
    """The leader's n* against the cache's, in words, with the ratio leader/cache and its paired interval:
    'a tie (×1.02 [0.95, 1.10])', 'more (×2.10 [1.80, 2.40])', 'fewer (×0.50 [0.45, 0.56])', '—'."""
    if cache_row is None:
        return "—"
    a, c = nstar(lead_row), nstar(cache_row)
    if not a or not c:
        return "a tie (both below the smallest n)" if not a and not c else "more" if a > c else "fewer"
    r = compare(lead_row, cache_row)
    if r.tie():
        return "a tie (%s)" % fmt_ratio(r)
    return "%s (%s)" % ("more" if r.value > 1 else "fewer", fmt_ratio(r))


def which_table(caps, manifest, edges):
    """(lines, points): the "which memory when" table and, per row, (part, noise, budget, leaders,
    capacity, cache row). overwrite_recall is ranked on rewritten and untouched keys together (the
    largest n at which both pass), each slot's own capacity beside."""
    head = ["task", "noise", "floats", "stores the most (fixed state; all when tied)", "capacity",
            "cache (softmax)", "against the cache"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    points = []
    for part, pc in caps.items():
        if part in (("overwrite_recall", "untouched"), ("overwrite_recall", "rewritten")):
            continue  # beside both together
        slots = ([("rewritten", caps.get(("overwrite_recall", "rewritten"), {})),
                  ("untouched", caps.get(("overwrite_recall", "untouched"), {}))] if part[0] == "overwrite_recall" else [])
        for (noise, b), (ms, top, cache) in leaders(pc).items():
            def bracket(m, r):  # " (settings; rewritten and untouched capacity)"
                extra = [settings(r, manifest, edges)]
                for what, sc in slots:
                    if (m, noise, b) in sc:
                        extra.append("%s %s" % (what, cap_text(sc[(m, noise, b)])))
                inner = "; ".join(x for x in extra if x)
                return " (%s)" % inner if inner else ""
            who = ", ".join(label(m) + bracket(m, pc[(m, noise, b)]) for m in ms)
            first = pc[(ms[0], noise, b)]
            cache_text = "—" if cache is None else cap_text(cache) + bracket(base(cache["memory_spec"]), cache)
            lines.append("| %s | %s | %d | %s | %s | %s | %s |" % (
                part_name(part), noise_words(noise), b, who, cap_text(first), cache_text, against(first, cache)))
            points.append((part, noise, b, ms, first, cache))
    return lines, points


def horizon_table(hz, manifest, edges):
    """Per memory and noise (rows) and budget (columns): the horizon at the largest window measured,
    '≥' when every lag passes, '<' when the first misses; the window when smaller than the largest
    measured at that budget; the width and settings (the decay) chosen there."""
    noises = noise_order({n for _, n, _ in hz})
    budgets = sorted({b for _, _, b in hz})
    tops = {(n, b): max(h[0] for (m, nn, bb), h in hz.items() if nn == n and bb == b) for (_, n, b) in hz}
    head = "| memory | noise | " + " | ".join("%d floats" % b for b in budgets) + " |"
    lines = [head, "|---|---|" + "---|" * len(budgets)]
    for noise in noises:
        for m in memory_order(mm for mm, n, _ in hz if n == noise):
            cells_ = []
            for b in budgets:
                if (m, noise, b) not in hz:
                    cells_.append("—")
                    continue
                w, h, curve, row = hz[(m, noise, b)]
                s = row_settings(row, manifest, edges)
                cells_.append("%s%s%s" % (fmt_cap(h, curve[-1][0], curve[0][0]),
                                          "" if w == tops[(noise, b)] else " at W=%d" % w, " (%s)" % s if s else ""))
            lines.append("| %s | %s | %s |" % (label(m), noise_words(noise), " | ".join(cells_)))
    return lines, tops


def closest_n(ns, target=OVERWRITE_AT):
    """The n tried closest to target on a log scale (the smaller when two are as close)."""
    return min(sorted(ns), key=lambda n: abs(math.log(n / target))) if ns else None




GATE_FRAMES = (("salient_recall", ""), ("salient_recall", "gate=all"))  # no memory gated, every memory gated


def gate_table(caps, summary):
    """(lines, pairs): what the gate buys on salient_recall, the same gate for every memory. Per memory
    measured in both frames (gate=none: every pair written; gate=all: the task skips the distractors for
    every memory), noise and budget: both n*, their paired ratio (the frames share episodes), and both
    accuracies (± 1 SE) at n = the gated capacity, with whether their intervals (mean ± 2 SE) are apart.
    pairs = [(memory, noise, budget, (ungated row, gated row), apart)]."""
    none, every = (caps.get(p, {}) for p in GATE_FRAMES)
    acc = {}
    for r in summary:
        if base(r["task_spec"]) == "salient_recall":
            frame = GATE_FRAMES[1] if part_of(r) == GATE_FRAMES[1] else GATE_FRAMES[0]
            acc[(frame, base(r["memory_spec"]), noise_of(r), int(r["budget_floats"]), int(r["n"]))] = (
                fnum(r["accuracy_mean_frac"]), se(r))
    lines = ["| memory | noise | floats | n*: none gated / every memory gated | gated ÷ ungated | "
             "at n = the gated capacity: ungated / gated | intervals (± 2 SE) |", "|---|---|---|---|---|---|---|"]
    pairs = []
    keys = [k for k in every if k in none]
    for noise in noise_order({k[1] for k in keys}):
        for b in sorted({k[2] for k in keys if k[1] == noise}):
            for m in memory_order(k[0] for k in keys if k[1] == noise and k[2] == b):
                ur, gr = none[(m, noise, b)], every[(m, noise, b)]
                n = gr["capacity"]
                u = acc.get((GATE_FRAMES[0], m, noise, b, n)) if n else None
                g = acc.get((GATE_FRAMES[1], m, noise, b, n)) if n else None
                apart = bool(u and g and g[0] - 2 * g[1] > u[0] + 2 * u[1])
                at = ("%.2f ± %.2f / %.2f ± %.2f" % (u[0], u[1], g[0], g[1])) if u and g else "—"
                lines.append("| %s | %s | %d | %s / %s | %s | %s | %s |" % (
                    label(m), noise_words(noise), b, cap_text(ur), cap_text(gr), gain_text(ur, gr), at,
                    "apart" if apart else ("overlap" if u and g else "—")))
                pairs.append((m, noise, b, (ur, gr), apart))
    return (lines if pairs else []), pairs


def gain_text(ur, gr):
    """The gated n* over the ungated one with its paired interval (the two frames share episodes); '—' when
    the gated is below the smallest n tried."""
    if not nstar(gr):
        return "—"
    if not nstar(ur):
        return "> " + ratio_words(nstar(gr), ur["smallest_tried"])
    return fmt_ratio(compare(gr, ur))


def gain_ratios(pairs):
    """{memory: [crossing.Ratio gated over ungated]} over the pairs whose two n* are both measured."""
    out = OrderedDict()
    for m, noise, b, (ur, gr), _ in pairs:
        if nstar(ur) and nstar(gr):
            r = compare(gr, ur)
            if not r.bound.startswith("both"):  # both beyond the n tried: no ratio measured
                out.setdefault(m, []).append(r)
    return out


def span_ratio(rs):
    """The smallest and largest of [crossing.Ratio], each with its interval: '×2.1 [1.9, 2.3]' or
    '×2.1 [1.9, 2.3] to ×4.0 [3.5, 4.4]'."""
    lo, hi = min(rs, key=lambda r: r.value), max(rs, key=lambda r: r.value)
    return fmt_ratio(lo) if lo.value == hi.value else "%s to %s" % (fmt_ratio(lo), fmt_ratio(hi))


def gate_words(pairs, caps=None):
    """The gate's effect in words, from gate_table's pairs: at how many points the gated frame stores more
    marked pairs than the ungated one (the paired ratio interval of n* above 1; accuracy intervals apart),
    the ratios per memory, and — when the study has assoc_recall written once — at how many points a gated
    memory's n* ties its assoc_recall n*."""
    if not pairs:
        return ""
    more = [p for p in pairs if order(p[3][1], p[3][0]) > 0]
    apart = [p for p in more if p[4]]
    ratios = gain_ratios(pairs)
    text = ("Gating every memory's writes raises its n* in marked pairs (the paired ratio interval above 1) at "
            "%d of %d (memory, noise, budget) points, with accuracy intervals apart (± 2 SE at the gated capacity) "
            "at %d of them" % (len(more), len(pairs), len(apart)))
    if ratios:
        text += "; gated ÷ ungated: " + "; ".join("%s %s" % (label(m), span_ratio(rs)) for m, rs in ratios.items())
    text += "."
    eq = same_as_assoc(pairs, caps or {})
    if eq:
        text += (" Gated, a memory stores what it stores on assoc_recall with the marked pairs alone: its n* ties "
                 "its assoc_recall n* (the unpaired ratio interval holds 1) at %d of the %d points measured on both%s." % (
                     len(eq[0]), eq[1], "" if len(eq[0]) == eq[1] else " (" + "; ".join(eq[2]) + " differ)"))
    return text


def versus(a, b):
    """crossing.Ratio of row a's n* over row b's from two tasks (different episodes): unpaired."""
    if a.get("curve") is not None and b.get("curve") is not None:
        return crossing.ratio(a["curve"], b["curve"], THRESHOLD, paired=False)
    return compare(a, b)


def same_as_assoc(pairs, caps):
    """([points tied], points compared, [the others in words]): the gated n* against the same memory's
    assoc_recall (written once) n* at the same noise and budget, a tie when the unpaired ratio interval
    holds 1; None when the study has no such rows."""
    assoc = caps.get(("assoc_recall", "passes=1"), caps.get(("assoc_recall", ""), {}))
    both = [(m, noise, b, gr) for m, noise, b, (_, gr), _ in pairs if (m, noise, b) in assoc]
    if not both:
        return None
    tied = lambda p: (not nstar(p[3]) and not nstar(assoc[p[:3]])) or (
        nstar(p[3]) and nstar(assoc[p[:3]]) and versus(p[3], assoc[p[:3]]).tie())
    eq = [p for p in both if tied(p)]
    other = ["%s at %s, %d floats: %s against %s" % (label(m), noise_words(noise), b, cap_text(gr), cap_text(assoc[(m, noise, b)]))
             for m, noise, b, gr in both if not tied((m, noise, b, gr))]
    return eq, len(both), other


def overwrite_table(summary, manifest, edges):
    """(lines, n, acc): per memory and noise (rows) and budget (columns), the mean accuracy ± 1 SE on
    rewritten and untouched keys at one n (OVERWRITE_AT, or the closest tried); acc = {(memory, noise,
    budget): (rewritten, untouched)} as (mean, se) pairs."""
    rows = [r for r in summary if base(r["task_spec"]) == "overwrite_recall" and r["slot"] in OVERWRITE_SLOTS]
    n = closest_n({int(r["n"]) for r in rows})
    if n is None:
        return [], None, {}
    at = OrderedDict()
    for r in rows:
        if int(r["n"]) == n:
            at.setdefault((base(r["memory_spec"]), noise_of(r), int(r["budget_floats"])), {})[r["slot"]] = r
    budgets = sorted({b for _, _, b in at})
    head = "| memory | noise | " + " | ".join("%d floats: rewritten / untouched" % b for b in budgets) + " |"
    lines = [head, "|---|---|" + "---|" * len(budgets)]
    acc = {}
    for noise in noise_order({nz for _, nz, _ in at}):
        for m in memory_order(mm for mm, nz, _ in at if nz == noise):
            cs = []
            for b in budgets:
                slots = at.get((m, noise, b), {})
                if "0" not in slots or "1" not in slots:
                    cs.append("—")
                    continue
                rw, un = slots["1"], slots["0"]
                acc[(m, noise, b)] = ((fnum(rw["accuracy_mean_frac"]), se(rw)), (fnum(un["accuracy_mean_frac"]), se(un)))
                s = row_settings(rw, manifest, edges)
                cs.append("%.2f ± %.2f / %.2f ± %.2f%s" % (acc[(m, noise, b)][0] + acc[(m, noise, b)][1] +
                                                          (" (%s)" % s if s else "",)))
            lines.append("| %s | %s | %s |" % (label(m), noise_words(noise), " | ".join(cs)))
    return lines, n, acc


def passes_table(caps, manifest, edges):
    """(lines, {(memory, noise, budget): [capacity row per number of passes]}): per memory, noise and
    budget the capacity at each number of passes tried (1, 2, 4), with the settings chosen there."""
    parts = [p for p in caps if p[0] == "assoc_recall"]
    if not parts:
        return [], {}, []
    keys = memory_order(m for p in parts for m, _, _ in caps[p])
    noises = noise_order({n for p in parts for _, n, _ in caps[p]})
    budgets = sorted({b for p in parts for _, _, b in caps[p]})
    head = "| memory | noise | floats | " + " | ".join(p[1].replace("=", " = ") for p in parts) + " |"
    lines = [head, "|---|---|---|" + "---|" * len(parts)]
    per = OrderedDict()
    for m in keys:
        for noise in noises:
            for b in budgets:
                rs = [caps[p].get((m, noise, b)) for p in parts]
                if not any(rs):
                    continue
                per[(m, noise, b)] = rs
                cs = []
                for r in rs:
                    if r is None:
                        cs.append("—")
                        continue
                    s = settings(r, manifest, edges)
                    cs.append(cap_text(r) + (" (%s)" % s if s else ""))
                lines.append("| %s | %s | %d | %s |" % (label(m), noise_words(noise), b, " | ".join(cs)))
    return lines, per, parts


# ------------------------------------------------------------------ words

def lead_words(points):
    """Per part: the fixed-state memories that lead at the most (noise, budget) points (ties included)."""
    out = []
    for part in OrderedDict((p[0], 1) for p in points):
        wins = OrderedDict()
        at = [p for p in points if p[0] == part]
        for _, _, _, ms, _, _ in at:
            for m in ms:
                wins[m] = wins.get(m, 0) + 1
        most = max(wins.values())
        best = [m for m in memory_order(wins) if wins[m] == most]
        out.append("%s: %s (%d of %d)" % (part_name(part), list_words([label(m) for m in best]), most, len(at)))
    return ("Of the fixed-state memories, the one storing the most (ties included, at how many of the (noise, "
            "budget) points): " + "; ".join(out) + ".") if out else ""


def cache_words(points):
    """Where the leading fixed state matches or beats the cache (capacity equal to it or above)."""
    eq, more, fewer = [], [], []
    for part, noise, b, ms, first, cache in points:
        if cache is None:
            continue
        o = order(first, cache)
        where = "%s at %s, %d floats (%s)" % (part_name(part), noise_words(noise), b, cap_text(first))
        (eq if o == 0 else more if o > 0 else fewer).append(where)
    if not (eq or more or fewer):
        return ""
    text = []
    if eq:
        text.append("A fixed state ties the cache (paired ratio interval of n* holding 1) on %s" % "; ".join(eq))
    if more:
        text.append("it stores more than the cache on %s" % "; ".join(more))
    if fewer:
        text.append("it stores fewer on %d of the %d points where the cache ran" % (len(fewer), len(eq) + len(more) + len(fewer)))
    return (". ".join(t[0].upper() + t[1:] for t in text) + ". (≥: the largest n tried passes, a lower bound, so "
            "an equality there may hide a difference.)")


def horizon_words(hz):
    """Per noise and budget: the fixed-state memories (any but the cache) with the longest horizon (each
    at the window of its longest, horizons(longest=True)), that horizon, and the cache's beside it."""
    out = []
    for noise in noise_order({n for _, n, _ in hz}):
        for b in sorted({bb for _, n, bb in hz if n == noise}):
            at = {m: h for (m, n, bb), h in hz.items() if n == noise and bb == b}
            rec = {m: h for m, h in at.items() if m not in caches()}
            if not rec:
                continue
            best = max(h[1] or 0 for h in rec.values())
            ms = [m for m in memory_order(rec) if (rec[m][1] or 0) == best]
            cache = next((at[c] for c in caches() if c in at), None)
            out.append("%s at %d floats, %s (%s%s)" % (
                noise_words(noise), b, list_words([label(m) for m in ms]), hfmt(rec[ms[0]]),
                "; the cache %s" % hfmt(cache) if cache else ""))
    return ("The longest horizon of a fixed state: " + "; ".join(out) + ".") if out else ""


def hfmt(h):
    """A horizon (W, horizon, curve, row) as the tables print it: '≥' at the curve's largest lag, '<' its first."""
    return fmt_cap(h[1], h[2][-1][0], h[2][0][0])


def overwrite_words(caps):
    """Per memory, at how many of its (noise, budget) points the capacity on rewritten keys is below,
    equal to or above that on untouched keys (below: it stores a key better than it replaces its value)."""
    rw, un = caps.get(("overwrite_recall", "rewritten"), {}), caps.get(("overwrite_recall", "untouched"), {})
    count = OrderedDict()
    for k in rw:
        if k in un:
            o = order(rw[k], un[k])
            tally = count.setdefault(k[0], OrderedDict([("below", 0), ("equal", 0), ("above", 0), ("of", 0)]))
            tally["below" if o < 0 else "equal" if o == 0 else "above"] += 1
            tally["of"] += 1
    if not count:
        return ""
    items = []
    for m in memory_order(count):
        t = count[m]
        parts = ["%s at %d" % (w, t[w]) for w in ("below", "equal", "above") if t[w]]
        items.append("%s %s of %d" % (label(m), ", ".join(parts), t["of"]))
    return ("n* on rewritten keys against n* on untouched keys, at the (noise, budget) points (equal: the paired "
            "ratio interval holds 1): " + "; ".join(items) + " (`≥` on both counts as equal).")


def replace_words(caps):
    """Who replaces a value, computed from the rows: per memory, at how many (noise, budget) points its
    rewritten keys pass at some n (a capacity on slot 1); on both slots together, who leads (ties
    included) and where the cache stands against the leader; and the recency slope the cache's race
    chose at its capacity points."""
    rw = caps.get(("overwrite_recall", "rewritten"), {})
    both = caps.get(("overwrite_recall", "both"), {})
    if not rw:
        return ""
    tally = OrderedDict()
    for (m, noise, b), r in rw.items():
        t = tally.setdefault(m, [0, 0])
        t[0] += 1 if nstar(r) else 0
        t[1] += 1
    every = [label(m) for m in memory_order(tally) if tally[m][0] == tally[m][1]]
    some = ["%s (%d of %d)" % (label(m), tally[m][0], tally[m][1]) for m in memory_order(tally) if 0 < tally[m][0] < tally[m][1]]
    none = [label(m) for m in memory_order(tally) if tally[m][0] == 0]
    out = ["Rewritten keys read at ≥ 90%% at some n, at every (noise, budget) point: %s" % (list_words(every) if every else "none")]
    if some:
        out.append("at some: " + list_words(some))
    if none:
        out.append("at none: " + list_words(none))
    text = "; ".join(out) + "."
    lead = leaders(both)
    if lead:
        wins, cache_vs = OrderedDict(), OrderedDict([("more", 0), ("equal", 0), ("fewer", 0)])
        for (noise, b), (ms, top, cache) in lead.items():
            for m in ms:
                wins[m] = wins.get(m, 0) + 1
            if cache is not None:
                o = order(cache, both[(ms[0], noise, b)]) if top and nstar(cache) else (
                    -1 if top else 0 if not nstar(cache) else 1)
                cache_vs["more" if o > 0 else "equal" if o == 0 else "fewer"] += 1
        text += (" On rewritten and untouched keys together, the fixed state storing the most (ties: a paired "
                 "ratio interval of n* holding 1): %s, "
                 "of %d points" % (list_words(["%s at %d" % (label(m), wins[m]) for m in memory_order(wins)]), len(lead)))
        if sum(cache_vs.values()):
            text += "; against it the cache stores %s" % ", ".join(
                "%s at %d" % ({"equal": "as many"}.get(k, k), v) for k, v in cache_vs.items() if v)
        text += "."
    slopes = OrderedDict()
    for (m, noise, b), r in both.items():
        if m in caches() and r.get("at_capacity"):
            v = tuned_values(r["at_capacity"].get("tuned", "")).get("slope")
            if v is not None:
                slopes[v] = slopes.get(v, 0) + 1
    if slopes:
        text += " The cache's raced recency slope at its capacity: %s." % ", ".join(
            "%s at %d point%s" % (v, k, "" if k == 1 else "s") for v, k in sorted(slopes.items(), key=lambda kv: float(kv[0])))
    return text


def passes_words(per, parts):
    """Per memory: whether its capacity rises, falls or stays with more passes (at every noise and budget)."""
    if len(parts) < 2:
        return ""
    trend = OrderedDict()
    for (m, noise, b), rs in per.items():
        rs_ = [r for r in rs if r is not None]
        if len(rs_) < 2:
            continue
        o = order(rs_[-1], rs_[0])
        t = "rises" if o > 0 else "falls" if o < 0 else "stays"
        trend.setdefault(m, set()).add(t)
    groups = OrderedDict()
    for m, ts in trend.items():
        groups.setdefault(" or ".join(sorted(ts)) if len(ts) > 1 else next(iter(ts)), []).append(label(m))
    words = {"rises": "rises", "falls": "falls", "stays": "stays the same"}
    items = ["%s for %s" % (" or ".join(words.get(t, t) for t in k.split(" or ")), list_words(ms))
             for k, ms in groups.items()]
    return ("From %s to %s, the capacity %s." % (parts[0][1].replace("=", " = "), parts[-1][1].replace("=", " = "),
                                                 "; ".join(items))) if items else ""


def task_words(summary):
    """What the tasks were, with their parameters read from the spec strings."""
    specs = OrderedDict((base(r["task_spec"]), r["task_spec"]) for r in summary)
    out = []
    if "recent_recall" in specs:
        s = specs["recent_recall"]
        out.append("recent_recall writes %s·W pairs and asks for the last W (n = W), its queries in %s lag buckets "
                   "(a row per bucket, its largest lag)" % (param(s, "ratio"), param(s, "buckets")))
    if "overwrite_recall" in specs:
        s = specs["overwrite_recall"]
        out.append("overwrite_recall writes n pairs and a fraction %s of the keys again with fresh values, %s; a "
                   "rewritten key's answer is its latest value" % (
                       param(s, "rewrite"), "every rewrite after the first writes" if spec_params(s).get("order", "last") == "last" else
                       "each rewrite at a random place after its key's first write"))
    if "salient_recall" in specs:
        out.append("salient_recall hides n marked pairs among %s·n unmarked ones and asks for the marked, %s" % (
            param(specs["salient_recall"], "distractors"),
            "with no memory gated and with every memory's writes gated (gate=all)" if any(
                "gate" in spec_params(r["task_spec"]) for r in summary if base(r["task_spec"]) == "salient_recall")
            else "with no memory gated"))
    ps = sorted({int(passes(r["task_spec"])) for r in summary if base(r["task_spec"]) == "assoc_recall"})
    if ps:
        out.append("assoc_recall writes its n pairs %s times" % list_words([str(p) for p in ps]).replace(" and ", " or "))
    return "; ".join(out)


# ------------------------------------------------------------------ the section

def load(ctx):
    """(summary rows, manifest, the study's per-seed index); None when streams/streams_summary.csv is not
    there. The intervals are bootstrapped over this study's seeds only: a cell another sweep also ran
    (assoc_recall's, in the main job and the modern study, with other seeds near its crossing) would
    otherwise be resampled over both sweeps' seeds (crossing.SEEDS merges them)."""
    per_seed = os.path.join(ctx.reports_dir, "streams", "streams.csv")
    load_seeds(per_seed)  # per seed: the crossings' intervals (crossing.SEEDS)
    summary, manifest = read(ctx.reports_dir)
    seeds = read_seeds(per_seed) if os.path.exists(per_seed) else None
    return (summary, manifest, seeds) if summary else None


def compute(data):
    """Plain rows (memcap_report.verdict): the capacity points of every part (overwrite_recall on both slots)."""
    return part_rows(part_capacities(data[0], data[2]), "streams")


def render(data, rows, ctx):
    """The section's lines; draws FIGURE into ctx.figures."""
    summary, manifest, seeds_index = data
    figures_dir = ctx.figures
    learn_memories(summary)
    caps = part_capacities(summary, seeds_index)
    edges = OrderedDict()
    seeds = sorted({r["seeds"] for r in summary}, key=int)
    text = ["## Where decays, overwrites and gates pay", "",
            "Tasks whose streams hold more than the pairs asked for (`tasks/stream_recall.hpp`, "
            "`scripts/studies/streams/streams.ini`, `reports/streams/`): %s. Every memory at its best width and settings, "
            "chosen on tuning seeds disjoint from the %s scored seeds. Capacity: n* [95%% interval], where mean accuracy "
            "(recent_recall: over its lags) crosses 90%% along n (window W, distinct keys, marked pairs), interpolated "
            "in log n between the two n tried that bracket it, the interval from a bootstrap over the scored seeds; "
            "`≥` marks the largest n tried (a lower bound), `<` the smallest. In brackets the width and settings "
            "chosen at the largest n passing. Ties: n* over n* with a paired 95%% interval holding 1." %
            (task_words(summary), "/".join(seeds)), ""]
    which, points = which_table(caps, manifest, edges)
    text += [resolved_line([r for pc in caps.values() for r in pc.values()], "Resolution"), ""]
    text += ["### Which memory when", "",
             "Per task, noise and budget, the fixed-state memory (any but the cache) storing the most; every one "
             "of them when several tie. overwrite_recall is ranked on rewritten and untouched keys together (the largest n at which both pass: a memory that keeps only the newest pairs is not credited for forgetting the rest), each slot's capacity beside.", ""] + which + [""]
    words = [w for w in (lead_words(points), cache_words(points)) if w]
    text += [" ".join(words), ""] if words else []

    hz = horizons(summary)
    if hz:
        os.makedirs(figures_dir, exist_ok=True)
        streams_figure(hz, os.path.join(figures_dir, FIGURE))
        longest = horizons(summary, longest=True)
        lines, tops = horizon_table(longest, manifest, edges)
        text += ["### The horizon of a fixed state (recent_recall)", "",
                 "The horizon: on a recall-against-lag curve, the last lag before the first lag bucket below 90% "
                 "(`≥` every lag passes, `<` the first misses). Each window W has its own race (a long window's "
                 "decay can cost the near lags), so the table gives the longest horizon over the windows measured, "
                 "the window it was read at when that is not the largest, and the width and decay chosen there.",
                 ""] + lines + [""]
        hw = horizon_words(longest)
        text += ([hw, ""] if hw else []) + ["![recall against lag at the largest window](figures/%s)" % FIGURE, ""]

    lines, pairs = gate_table(caps, summary)
    if lines:
        text += ["### What a gate buys (salient_recall)", "",
                 "The same gate for every memory, or for none: each memory in both frames at equal state — no memory "
                 "gated (every pair written) and every memory gated (`gate=all`: the task skips the marked distractors "
                 "before any memory writes, the cache, the grids and the gated grids alike). No memory reads the mark "
                 "itself, so a gated grid's own step is 1 in both.", ""] + lines + [""]
        gw = gate_words(pairs, caps)
        text += [gw, ""] if gw else []

    lines, n, _ = overwrite_table(summary, manifest, edges)
    if lines:
        text += ["### Overwrites (overwrite_recall)", "",
                 "Mean accuracy ± 1 SE at n = %d on rewritten keys (right: the latest value) and untouched keys, the "
                 "width and settings chosen there in brackets." % n, ""] + lines + [""]
        ow = " ".join(w for w in (replace_words(caps), overwrite_words(caps)) if w)
        text += [ow, ""] if ow else []

    lines, per, parts = passes_table(caps, manifest, edges)
    if lines:
        text += ["### Writing the pairs again (assoc_recall:passes)", "",
                 "Capacity per number of passes over the same n pairs.", ""] + lines + [""]
        pw = passes_words(per, parts)
        text += [pw, ""] if pw else []
    ew = edge_words(edges)
    return text + ([ew, ""] if ew else [])


def section(reports_dir, figures_dir=None):
    """The section's lines ([] when streams/streams_summary.csv is not there); draws FIGURE into
    figures_dir (default REPORTS_DIR/figures)."""
    return run(sys.modules[__name__], Context(reports_dir, figures_dir))


# ------------------------------------------------------------------ the README

def readme_name(memory):
    """A memory's name in the README's grouped cells: its table name without the asides."""
    return label(memory).split(" (")[0].split(" = ")[0]


def readme_which(caps):
    """The README's "which memory when": per part and noise (rows) and budget (columns), the fixed-state
    memories storing the most (all when tied), their capacity and the cache's beside it."""
    budgets = sorted({b for pc in caps.values() for _, _, b in pc})
    lines = ["| task | noise | %s |" % " | ".join("%d floats" % b for b in budgets), "|---|---|" + "---|" * len(budgets)]
    for part, pc in caps.items():
        if part in (("overwrite_recall", "untouched"), ("overwrite_recall", "rewritten")):
            continue  # ranked on both slots together
        lead = leaders(pc)
        for noise in noise_order({n for n, _ in lead}):
            cells = []
            for b in budgets:
                if (noise, b) not in lead:
                    cells.append("—")
                    continue
                ms, _, cache = lead[(noise, b)]
                cells.append("%s: %s (cache %s)" % ("/".join(readme_name(m) for m in ms), cap_text(pc[(ms[0], noise, b)]),
                                                    "—" if cache is None else cap_text(cache)))
            lines.append("| %s | %s | %s |" % (part_name(part), noise_words(noise, short=True), " | ".join(cells)))
    return "\n".join(lines)


def readme_residuals(theory):
    """(table, rows per line): per memory, model and noise, the residuals (model − measured, points) of
    recent_recall's rows in theory.csv: the median of their sizes, their mean, and the share within 3 SE
    of the measurement."""
    groups = OrderedDict()
    for r in theory:
        if base(r["task_spec"]) == "recent_recall" and r["residual_points"] != "":
            groups.setdefault((base(r["memory_spec"]), r["model"]), OrderedDict()).setdefault(noise_key(r["task_spec"]), []).append(r)
    lines = ["| memory | model | noise | median abs residual (points) | mean residual | within 3 SE |", "|---|---|---|---|---|---|"]
    counts = set()
    for (m, model), by_noise in groups.items():
        for noise in noise_order(by_noise):
            rs = by_noise[noise]
            res = [fnum(r["residual_points"]) for r in rs]
            within = sum(1 for r, x in zip(rs, res) if abs(x) <= 3 * 100 * fnum(r["measured_se_frac"]))
            mean = sum(res) / len(res)
            lines.append("| `%s` | %s | %s | %.1f | %s%.1f | %d%% |" % (
                m, model, noise_words(noise, short=True), median([abs(x) for x in res]),
                "−" if mean < 0 and round(mean, 1) != 0 else "+", abs(mean), round(100.0 * within / len(rs))))
            counts.add(len(rs))
    return "\n".join(lines), "/".join(str(c) for c in sorted(counts))


def median(xs):
    xs = sorted(xs)
    k = len(xs) // 2
    return xs[k] if len(xs) % 2 else (xs[k - 1] + xs[k]) / 2


def readme_passes(caps, manifest):
    """The README's words on writing the pairs again: the memories whose n* never changes with the
    number of passes (the paired ratio interval holds 1), then per other memory each change between two
    numbers of passes tried."""
    _, per, parts = passes_table(caps, manifest, OrderedDict())
    if len(parts) < 2:
        return "(one number of passes measured)"
    same, moved = [], OrderedDict()
    for (m, noise, b), rs in per.items():
        for (p0, r0), (p1, r1) in zip(zip(parts, rs), list(zip(parts, rs))[1:]):
            if r0 is not None and r1 is not None and order(r1, r0) != 0:
                moved.setdefault(m, []).append((order(r1, r0) > 0, "%s → %s at %d floats, %s, %s" % (
                    cap_text(r0), cap_text(r1), b, p1[1].replace("passes=", "") + " passes", noise_words(noise, short=True))))
    same = [readme_name(m) for m in memory_order({m for m, _, _ in per}) if m not in moved]
    items = []
    for m, ch in moved.items():
        ups = {up for up, _ in ch}
        how = "rises" if ups == {True} else "falls" if ups == {False} else "moves"
        items.append("%s's %s%s at %d point%s (%s)" % (readme_name(m), "" if items else "capacity ", how, len(ch),
                                                   "" if len(ch) == 1 else "s", "; ".join(w for _, w in ch)))
    return "%s%s" % ("nothing changes for %s" % list_words(same) if same else "every memory's capacity changes",
                     "; " + " and ".join(items) if items else "")


def readme_window_lead(caps):
    """How many times the fixed-state leaders' window the cache holds on recent_recall, over the (noise,
    budget) points: "×2.00–×4.00" (the window is read to its first miss: a ratio of whole windows, no
    interval), "≥" on a ratio where the cache passes the largest window tried (a lower bound)."""
    pc = caps.get(("recent_recall", ""), {})
    ratios = []
    for (noise, b), (ms, top, cache) in leaders(pc).items():
        if cache is not None and top and nstar(cache):
            ratios.append(compare(cache, pc[(ms[0], noise, b)]))
    if not ratios:
        return "—"
    lo, hi = min(ratios, key=lambda r: r.value), max(ratios, key=lambda r: r.value)
    return fmt_ratio(lo) if lo.value == hi.value else "%s–%s" % (fmt_ratio(lo), fmt_ratio(hi))


def frame_against_cache(pc):
    """For one salient_recall frame: the fixed-state memories leading at the most (noise, budget) points
    (ties by the paired ratio interval), and at how many points the best fixed state stores more marked
    pairs than the cache, as many (a tie: the ratio interval holds 1), fewer."""
    lead = leaders(pc)
    if not lead:
        return "—"
    tally = OrderedDict([("more", 0), ("as many", 0), ("fewer", 0)])
    wins = OrderedDict()
    for (noise, b), (ms, top, cache) in lead.items():
        for m in ms:
            wins[m] = wins.get(m, 0) + 1
        if cache is not None:
            o = order(pc[(ms[0], noise, b)], cache) if top and nstar(cache) else (1 if top else 0 if not nstar(cache) else -1)
            tally["more" if o > 0 else "as many" if o == 0 else "fewer"] += 1
    most = max(wins.values())
    best = [readme_name(m) for m in memory_order(wins) if wins[m] == most]
    text = "%s lead%s the fixed states (at %d of %d points)" % (list_words(best), "s" if len(best) == 1 else "", most, len(lead))
    counted = sum(tally.values())
    if counted:
        text += " and the best fixed state stores, against the cache, %s of %d" % (
            list_words(["%s at %d" % (w, k) for w, k in tally.items() if k]), counted)
    return text


def readme_salient(caps, summary):
    """The README's words on salient_recall: per frame (none gated, every memory gated) who leads and how the
    best fixed state stands against the cache; then what gating every memory buys each memory (gated ÷
    ungated capacity) and whether the gated capacities are the assoc_recall ones."""
    none, every = (caps.get(p, {}) for p in GATE_FRAMES)
    if not none and not every:
        return "(not measured)"
    out = []
    if none:
        out.append("with no memory gated, " + frame_against_cache(none))
    if every:
        out.append("with every memory gated, " + frame_against_cache(every))
    _, pairs = gate_table(caps, summary)
    ratios = gain_ratios(pairs)
    text = "; ".join(out) + "."
    if ratios:
        text += " Gating multiplies the marked pairs stored by " + "; ".join(
            "%s %s" % (readme_name(m), span_ratio(rs)) for m, rs in ratios.items()) + " (over budgets and noise)"
        eq = same_as_assoc(pairs, caps)
        if eq:
            text += ", and a gated memory's n* ties its assoc_recall n* at %d of %d points" % (len(eq[0]), eq[1])
        text += "."
    return text


def readme(data, rows, ctx):
    """reports/streams/README.md's computed parts (its template: README.md.in)."""
    summary, manifest, seeds_index = data
    caps = part_capacities(summary, seeds_index)
    theory = optional_csv(os.path.join(ctx.reports_dir, "streams", "theory.csv"))
    table, counts = readme_residuals(theory) if theory else ("(no `theory.csv`)", "0")
    return {"which_table": readme_which(caps), "residual_table": table, "residual_rows": counts,
            "passes": readme_passes(caps, manifest), "window_lead": readme_window_lead(caps),
            "overwrite_retnet": readme_pair(caps.get(("overwrite_recall", "both"), {}), "retnet", "delta"),
            "salient": readme_salient(caps, summary),
            "window_leaders": readme_leaders(caps.get(("recent_recall", ""), {})),
            "gla_vs_retnet": readme_pair(caps.get(("recent_recall", ""), {}), "gla", "retnet"),
            "grid_window": readme_span(caps.get(("recent_recall", ""), {}), "linear"),
            "overwrites": replace_words(caps) or "(not measured)"}


def readme_leaders(pc):
    """The fixed states leading at each (noise, budget) point of one part, ties included (leaders)."""
    out = ["%s (%s)" % ("/".join(readme_name(m) for m in ms), point_words(noise, b))
           for (noise, b), (ms, top, cache) in leaders(pc).items()]
    return "; ".join(out) or "—"


def readme_span(pc, memory):
    """A memory's n* over the points of one part, smallest to largest ('<4 to 21 [18, 25]')."""
    rs = [r for (m, _, _), r in pc.items() if m == memory]
    if not rs:
        return "—"
    lo, hi = min(rs, key=nstar), max(rs, key=nstar)
    return cap_text(lo) if lo is hi else "%s to %s" % (cap_text(lo), cap_text(hi))


def point_words(noise, b):
    return "%s, %d floats" % ("no noise" if noise == "cosine=1" else noise_words(noise, short=True), b)


def readme_pair(pc, a, c):
    """Memory a's n* over memory c's at every (noise, budget) point both ran: 'a tie, ×1.00 [0.95, 1.04]
    (no noise, 4096 floats)', ..."""
    out = []
    for noise, b in [(n, b) for n in noise_order({n for _, n, _ in pc}) for b in sorted({bb for _, nn, bb in pc if nn == n})]:
        if (a, noise, b) in pc and (c, noise, b) in pc:
            out.append("%s (%s)" % (against(pc[(a, noise, b)], pc[(c, noise, b)]), point_words(noise, b)))
    return "; ".join(out) or "—"
