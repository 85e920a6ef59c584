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
  salient_recall    n = marked pairs among distractors·n unmarked ones; capacity counts marked pairs.
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

from memcap_report.capacity import (at_largest_window, cap_text, part_capacities as shared_part_capacities, part_rows, horizon, lag_curve,
                                    passes)
from memcap_report.common import (Context, caches, reduces_to, run, COLOURS, SUMMARY_COLUMNS, base, fmt_cap, fnum, label, lag_panels, learn_memories, list_words,
                                  measured, name_order, noise_key, noise_order, noise_words, optional_csv, param, ratio_words, read_manifest,
                                  se, spec_params, tuned_keys, tuned_values)
from memcap_report.race import edge_words, settings

FIGURE = "streams_lag.png"
# The study's parts, in its tables' order: (task, part) -> how the tables name it (the parts themselves:
# capacity.part_of, from the catalog's slot parts and a task's passes).
PART_NAMES = OrderedDict([
    (("recent_recall", ""), "recent_recall (window W)"),
    (("overwrite_recall", "both"), "overwrite_recall (rewritten and untouched keys)"),
    (("overwrite_recall", "rewritten"), "overwrite_recall (rewritten keys)"),
    (("overwrite_recall", "untouched"), "overwrite_recall (untouched keys)"),
    (("salient_recall", ""), "salient_recall (marked pairs)"),
])
OVERWRITE_SLOTS = {"0": "untouched", "1": "rewritten"}


def part_name(part):
    return PART_NAMES.get(part) or ("%s, %s" % part if part[1] else part[0])


def part_capacities(summary):
    """capacity.part_capacities in the order of PART_NAMES."""
    return shared_part_capacities(summary, PART_NAMES)
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
    """{(noise, budget): (fixed-state memories with the largest capacity — every one when tied —, that
    capacity, the cache's capacity row or None)} for one part; a capacity below the smallest n counts 0."""
    out = OrderedDict()
    for noise in noise_order({n for _, n, _ in caps}):
        for b in sorted({bb for _, nn, bb in caps if nn == noise}):
            rec = {m: r["capacity"] or 0 for (m, n, bb), r in caps.items() if n == noise and bb == b and m not in caches()}
            cache = next((caps[(c, noise, b)] for c in caches() if (c, noise, b) in caps), None)
            if not rec:
                continue
            top = max(rec.values())
            out[(noise, b)] = ([m for m in memory_order(rec) if rec[m] == top], top, cache)
    return out


def against(lead_row, cache_row):
    """The leader's capacity against the cache's, in words: 'equal', 'more (×2)', 'fewer (×0.5)', '—'."""
    if cache_row is None:
        return "—"
    a, c = lead_row["capacity"] or 0, cache_row["capacity"] or 0
    if a == c:
        both_top = a and a >= lead_row["largest_tried"] and c >= cache_row["largest_tried"]
        return "equal (both ≥, at the largest n tried)" if both_top else "equal"
    if not a or not c:
        return "more" if a > c else "fewer"
    if a > c:  # the larger capacity at the largest n tried: the ratio is a lower bound
        return "more (%s%s)" % ("≥" if a >= lead_row["largest_tried"] else "", ratio_words(a, c))
    return "fewer (the cache %s%s)" % ("≥" if c >= cache_row["largest_tried"] else "", ratio_words(c, a))


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




def gate_table(caps, summary):
    """(lines, pairs): what the gate buys on salient_recall. Per (gated, ungated) pair present (the catalog's reduces_to: each gated
    memory and its special case, the same recurrence with the step Δ = 1 on every write at decay 1), noise
    and budget: both capacities, and both accuracies (± 1 SE) at the gated memory's capacity, with whether
    their intervals (mean ± 2 SE) are apart. pairs = [(gated, ungated, noise, budget, capacity rows, apart)]."""
    pc = caps.get(("salient_recall", ""), {})
    rows = [r for r in summary if base(r["task_spec"]) == "salient_recall"]
    acc = {(base(r["memory_spec"]), noise_of(r), int(r["budget_floats"]), int(r["n"])): (fnum(r["accuracy_mean_frac"]), se(r))
           for r in rows}
    lines = ["| gated memory | ungated special case | noise | floats | capacity: gated / ungated | at n = the gated capacity: "
             "gated / ungated | intervals (± 2 SE) |", "|---|---|---|---|---|---|---|"]
    pairs = []
    for g, u in reduces_to().items():
        for (m, noise, b), gr in pc.items():
            if m != g or (u, noise, b) not in pc:
                continue
            ur = pc[(u, noise, b)]
            n = gr["capacity"]
            a, c = acc.get((g, noise, b, n)) if n else None, acc.get((u, noise, b, n)) if n else None
            apart = bool(a and c and a[0] - 2 * a[1] > c[0] + 2 * c[1])
            at = ("%.2f ± %.2f / %.2f ± %.2f" % (a[0], a[1], c[0], c[1])) if a and c else "—"
            lines.append("| %s | %s | %s | %d | %s / %s | %s | %s |" % (
                label(g), label(u), noise_words(noise), b, cap_text(gr), cap_text(ur), at,
                "apart" if apart else ("overlap" if a and c else "—")))
            pairs.append((g, u, noise, b, (gr, ur), apart))
    return (lines if pairs else []), pairs


def gate_words(pairs):
    """The gate's effect in words, from gate_table's pairs: at how many points the gated memory stores more
    marked pairs than its ungated special case with intervals apart."""
    if not pairs:
        return ""
    more = [p for p in pairs if (p[4][0]["capacity"] or 0) > (p[4][1]["capacity"] or 0)]
    apart = [p for p in more if p[5]]
    return ("A gate stores more marked pairs than the same recurrence without it at %d of %d (memory, noise, budget) "
            "points, with intervals apart (± 2 SE at the gated capacity) at %d of them: the ungated grid pays for "
            "every distractor's crosstalk." % (len(more), len(pairs), len(apart)))


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
        a, c = first["capacity"] or 0, cache["capacity"] or 0
        where = "%s at %s, %d floats (%s)" % (part_name(part), noise_words(noise), b, cap_text(first))
        (eq if a == c else more if a > c else fewer).append(where)
    if not (eq or more or fewer):
        return ""
    text = []
    if eq:
        text.append("A fixed state matches the cache's capacity on %s" % "; ".join(eq))
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
            a, c = rw[k]["capacity"] or 0, un[k]["capacity"] or 0
            tally = count.setdefault(k[0], OrderedDict([("below", 0), ("equal", 0), ("above", 0), ("of", 0)]))
            tally["below" if a < c else "equal" if a == c else "above"] += 1
            tally["of"] += 1
    if not count:
        return ""
    items = []
    for m in memory_order(count):
        t = count[m]
        parts = ["%s at %d" % (w, t[w]) for w in ("below", "equal", "above") if t[w]]
        items.append("%s %s of %d" % (label(m), ", ".join(parts), t["of"]))
    return ("The capacity on rewritten keys against that on untouched keys, at the (noise, budget) points: " +
            "; ".join(items) + " (`≥` on both counts as equal).")


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
        t[0] += 1 if r["capacity"] else 0
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
                c = cache["capacity"] or 0
                cache_vs["more" if c > top else "equal" if c == top else "fewer"] += 1
        text += (" On rewritten and untouched keys together, the fixed state storing the most (ties included): %s, "
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
        caps_ = [r["capacity"] or 0 for r in rs if r is not None]
        if len(caps_) < 2:
            continue
        t = "rises" if caps_[-1] > caps_[0] else "falls" if caps_[-1] < caps_[0] else "stays"
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
        out.append("salient_recall hides n marked pairs among %s·n unmarked ones and asks for the marked" %
                   param(specs["salient_recall"], "distractors"))
    ps = sorted({int(passes(r["task_spec"])) for r in summary if base(r["task_spec"]) == "assoc_recall"})
    if ps:
        out.append("assoc_recall writes its n pairs %s times" % list_words([str(p) for p in ps]).replace(" and ", " or "))
    return "; ".join(out)


# ------------------------------------------------------------------ the section

def load(ctx):
    """(summary rows, manifest); None when streams/streams_summary.csv is not there."""
    summary, manifest = read(ctx.reports_dir)
    return (summary, manifest) if summary else None


def compute(data):
    """Plain rows (memcap_report.verdict): the capacity points of every part (overwrite_recall on both slots)."""
    return part_rows(part_capacities(data[0]), "streams")


def render(data, rows, ctx):
    """The section's lines; draws FIGURE into ctx.figures."""
    summary, manifest = data
    figures_dir = ctx.figures
    learn_memories(summary)
    caps = part_capacities(summary)
    edges = OrderedDict()
    seeds = sorted({r["seeds"] for r in summary}, key=int)
    text = ["## Where decays, overwrites and gates pay", "",
            "Tasks whose streams hold more than the pairs asked for (`tasks/stream_recall.hpp`, "
            "`scripts/studies/streams/streams.ini`, `reports/streams/`): %s. Every memory at its best width and settings, "
            "chosen on tuning seeds disjoint from the %s scored seeds. Capacity: the largest n (window W, distinct "
            "keys, marked pairs) with mean accuracy ≥ 90%% (recent_recall: over its lags); `≥` marks the largest n "
            "tried (a lower bound), `<` the smallest. In brackets the width and settings chosen there." %
            (task_words(summary), "/".join(seeds)), ""]
    which, points = which_table(caps, manifest, edges)
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
                 "Each gated memory beside its ungated special case (the same recurrence writing every pair) at "
                 "equal state: a gate that skips the marked distractors leaves the grid of the marked pairs alone.",
                 ""] + lines + [""]
        gw = gate_words(pairs)
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
    """The README's words on writing the pairs again: the memories whose capacity never changes with the
    number of passes, then per other memory each change between two numbers of passes tried."""
    _, per, parts = passes_table(caps, manifest, OrderedDict())
    if len(parts) < 2:
        return "(one number of passes measured)"
    same, moved = [], OrderedDict()
    for (m, noise, b), rs in per.items():
        for (p0, r0), (p1, r1) in zip(zip(parts, rs), list(zip(parts, rs))[1:]):
            if r0 is not None and r1 is not None and (r0["capacity"] or 0) != (r1["capacity"] or 0):
                moved.setdefault(m, []).append(((r1["capacity"] or 0) > (r0["capacity"] or 0), "%s → %s at %d floats, %s, %s" % (
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
    budget) points: "2–4×", "≥" on a ratio where the cache passes the largest window tried (a lower bound)."""
    ratios = []
    for (noise, b), (ms, top, cache) in leaders(caps.get(("recent_recall", ""), {})).items():
        if cache is not None and top and cache["capacity"]:
            ratios.append((cache["capacity"] / top, cache["capacity"] >= cache["largest_tried"]))
    if not ratios:
        return "—"
    lo, hi = min(ratios), max(ratios)
    words = lambda r: "%s%g" % ("≥" if r[1] else "", r[0])
    return "%s×" % words(lo) if lo == hi else "%s–%s×" % (words(lo), words(hi))


def readme(data, rows, ctx):
    """reports/streams/README.md's computed parts (its template: README.md.in)."""
    summary, manifest = data
    caps = part_capacities(summary)
    theory = optional_csv(os.path.join(ctx.reports_dir, "streams", "theory.csv"))
    table, counts = readme_residuals(theory) if theory else ("(no `theory.csv`)", "0")
    return {"which_table": readme_which(caps), "residual_table": table, "residual_rows": counts,
            "passes": readme_passes(caps, manifest), "window_lead": readme_window_lead(caps),
            "overwrites": replace_words(caps) or "(not measured)"}
