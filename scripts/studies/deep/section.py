"""Memories that are networks (deep/deep_summary.csv, from scripts/studies/deep/deep.ini): TTT-Linear, TTT-MLP
and Titans' memory at equal state, beside the matrix memories of the other studies — DeltaNet, Gated
DeltaNet, MesaNet and the cache, associative recall from modern/modern_summary.csv, recent_recall and
overwrite_recall from streams/streams_summary.csv — at the deep study's budgets.

  parts             assoc_recall (capacity along n), recent_recall (the largest window W whose mean over
                    its lag buckets is >= 0.9), overwrite_recall on rewritten keys (slot 1) and on
                    untouched keys (slot 0), each slot on its own: capacity.part_capacities cuts them.
  mini-batch/depth  the block `assoc_batch` races TTT's mini-batch size and Titans' depth (at one
                    budget): its rows, told apart by a `tuned` column naming batch= or depth=, are a
                    table of their own beside the main block's capacity at that budget.
  FLOPs per write   deep/costs.csv (optional, `memcap cost` over the three summaries): the row of each
                    capacity point (memory spec, task spec, budget, d, n there), beside the capacity.

What the section holds, every number read from the CSVs: a capacity table per part, the mini-batch and
depth table, per part a sentence setting the better deep MLP memory (TTT-MLP, Titans) against the best
matrix memory (DeltaNet, Gated DeltaNet, MesaNet) and counting where TTT-Linear's capacity equals
DeltaNet's, and an answer computed from them."""
import os
import sys
import statistics
from collections import OrderedDict

from memcap_report.crossing import load_seeds, read_seeds
from memcap_report.crossing import fmt_ratio as crossing_ratio
from memcap_report.capacity import compare as shared_compare, nstar_or_capacity, order, resolved_line
from memcap_report.capacity import cap_text, capacity_rows, part_capacities, part_rows, passes
from memcap_report.common import (Context, caches, networks, run, SUMMARY_COLUMNS, base, fnum, label as published, list_words, measured, noise_key,
                                  noise_order, noise_words, optional_csv, param, ratio_words, read_manifest, spec_params, tuned_keys)
from memcap_report.race import candidates, is_raced, settings

# Which memories are networks trained as they write, and which of them are more than a matrix,
# is memcap's table (`memcap list --json`: network_layers), read from the catalog: deep() and
# deep_mlp(). What this study sets them against is its own choice:
MATRIX = ("delta", "gated_deltanet", "mesanet")  # the matrix memories they are set against
CACHE = "softmax"
COMPARE = MATRIX + (CACHE,)


def deep():
    """The memories that are networks trained as they write (the catalog's order)."""
    return networks(1)


def deep_mlp():
    """Those of them that are more than a matrix (two layers or more)."""
    return networks(2)


def section_order():
    """The section's order of memories: the deep ones, then those they are set against."""
    return deep() + COMPARE
# The parts, in the tables' order (capacity.part_of's keys), and how the section names them.
PARTS = OrderedDict([
    (("assoc_recall", "passes=1"), "assoc_recall (stored pairs n)"),
    (("recent_recall", ""), "recent_recall (window W)"),
    (("overwrite_recall", "rewritten"), "overwrite_recall (rewritten keys)"),
    (("overwrite_recall", "untouched"), "overwrite_recall (untouched keys)"),
])
TUNED_APART = ("batch", "depth")  # keys only the block assoc_batch races
# Settings at the end of their range, not only of their candidates (memories/deep/deep_entry.cpp,
# memories/titans/entry.cpp: batch >= 1, steps >= 1, momentum and forget in [0, 1), depth >= 2): not flagged.
RANGE_ENDS = {"batch": 1.0, "steps": 1.0, "momentum": 0.0, "forget": 0.0, "depth": 2.0}


def label(memory):
    """The tables' name: the published one (common.label for the matrix memories and the cache)."""
    return published(memory)


def short(memory):
    """The sentences' name: the published one without common.label's asides ("DeltaNet", "softmax cache")."""
    name = label(memory).split(" (")[0].split(" = ")[0]
    return "the " + name if memory in caches() else name


def names(memories):
    return list_words([short(m) for m in memories])


def possessive(name):
    return name + ("'" if name.endswith("s") else "'s")


def memory_order(memories):
    ranks = section_order()
    return sorted(set(memories), key=lambda m: (ranks.index(m) if m in ranks else len(ranks), m))


# ------------------------------------------------------------------ reading

def is_apart(r):
    """A row of the block that races the mini-batch size or the depth."""
    return any(k in TUNED_APART for k in tuned_keys(r["tuned"]))


def merged(deep_manifest, other_manifest):
    """One manifest with the race candidates of the deep memories and of the comparison memories."""
    mem = OrderedDict((m, c) for m, c in candidates(other_manifest).items() if m in COMPARE)
    deep_names = deep()
    mem.update((m, c) for m, c in candidates(deep_manifest).items() if m in deep_names)
    return {"race_candidates": {"memories": mem}}


def read(reports_dir):
    """(main rows, mini-batch/depth rows, comparison rows, costs, {part: manifest}); main rows []
    when deep/deep_summary.csv is not there. Comparison rows: the memories of COMPARE at the deep
    study's budgets, assoc_recall from the modern study, recent_recall and overwrite_recall from streams."""
    summary = measured(optional_csv(os.path.join(reports_dir, "deep", "deep_summary.csv"), SUMMARY_COLUMNS))
    if not summary:
        return [], [], [], {}, {}
    deep_manifest = read_manifest(os.path.join(reports_dir, "deep", "deep.csv.manifest.json"))
    deep_names = deep()
    main = [r for r in summary if base(r["memory_spec"]) in deep_names and not is_apart(r)]
    apart = [r for r in summary if base(r["memory_spec"]) in deep_names and is_apart(r)]
    budgets = {r["budget_floats"] for r in main}
    mod = measured(optional_csv(os.path.join(reports_dir, "modern", "modern_summary.csv"), SUMMARY_COLUMNS))
    mod_manifest = read_manifest(os.path.join(reports_dir, "modern", "modern.csv.manifest.json")) if mod else {}
    st = measured(optional_csv(os.path.join(reports_dir, "streams", "streams_summary.csv"), SUMMARY_COLUMNS))
    st_manifest = read_manifest(os.path.join(reports_dir, "streams", "streams.csv.manifest.json")) if st else {}

    def keep(r, tasks):
        return base(r["memory_spec"]) in COMPARE and r["budget_floats"] in budgets and base(r["task_spec"]) in tasks
    other = ([r for r in mod if keep(r, ("assoc_recall",))] +
             [r for r in st if keep(r, ("recent_recall", "overwrite_recall"))])
    manifests = {p: merged(deep_manifest, mod_manifest if p[0] == "assoc_recall" else st_manifest) for p in PARTS}
    manifests["apart"] = merged(deep_manifest, {})
    return main, apart, other, read_costs(os.path.join(reports_dir, "deep", "costs.csv")), manifests


COST_COLUMNS = ("memory_spec", "task_spec", "budget_floats", "d", "n", "write_flops")


def read_costs(path):
    """{(memory_spec, task_spec, budget, d, n): FLOPs per write} from `memcap cost` ({} without the file)."""
    return OrderedDict(((r["memory_spec"], r["task_spec"], int(r["budget_floats"]), int(r["d"]), int(r["n"])),
                        fnum(r["write_flops"])) for r in optional_csv(path, COST_COLUMNS) if r["write_flops"] != "")


# ------------------------------------------------------------------ capacities

def task_specs(rows):
    """{(memory spec, task, noise, budget, d, n): task spec}: where a capacity point's task spec is looked up."""
    return {(r["memory_spec"], base(r["task_spec"]), noise_key(r["task_spec"]), int(r["budget_floats"]), int(r["d"]),
             int(r["n"])): r["task_spec"] for r in rows}


def flops_at(r, task, specs, costs):
    """FLOPs per write at a capacity row's point (its n, width and spec), or None."""
    if r is None or r["capacity"] is None or not r["spec_at_capacity"]:
        return None
    spec = specs.get((r["spec_at_capacity"], task, r["noise"], r["budget_floats"], r["d_at_capacity"], r["capacity"]))
    return costs.get((r["spec_at_capacity"], spec, r["budget_floats"], r["d_at_capacity"], r["capacity"]))


def capacities(rows, seeds=None):
    """{part: {(memory, noise, budget): capacity row}} for the parts of PARTS (capacity.part_capacities);
    `seeds`: load's per-seed index (None: every per-seed CSV the report loaded)."""
    caps = part_capacities(rows, (), seeds)
    return OrderedDict((p, caps[p]) for p in PARTS if p in caps)


# ------------------------------------------------------------------ numbers and words

def task_words(summary):
    """What the stream tasks were (recent_recall, overwrite_recall), with their parameters read from the
    spec strings (the streams study words them the same way)."""
    specs = OrderedDict((base(r["task_spec"]), r["task_spec"]) for r in summary)
    out = []
    if "recent_recall" in specs:
        s = specs["recent_recall"]
        out.append("recent_recall writes %s·W pairs and asks for the last W (n = W), its queries in %s lag buckets "
                   "(a row per bucket, its largest lag)" % (param(s, "ratio"), param(s, "buckets")))
    if "overwrite_recall" in specs:
        out.append("overwrite_recall writes n pairs, then a fraction %s of the keys again with fresh values; a "
                   "rewritten key's answer is its latest value" % param(specs["overwrite_recall"], "rewrite"))
    return "; ".join(out)


def fmt_flops(x):
    """FLOPs compactly: 850, 4.3k, 21k, 1.3M."""
    if x is None:
        return ""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale * 0.9995:
            v = x / scale
            return ("%d" % round(v) if v >= 9.95 else ("%.1f" % v).rstrip("0").rstrip(".")) + unit
    return "%d" % round(x)


def fmt_ratio(a, b):
    """a / b as '×4', '×1.5', '×305', '×1/4'."""
    if a < b:
        return "×1/" + fmt_ratio(b, a)[1:]
    return "×%d" % round(a / b) if a >= 9.95 * b else ratio_words(a, b)


def cap_of(r):
    """A row's n* at 0.9 (its capacity along a lag), the largest n tried for a bound, 0 below the range."""
    return (nstar_or_capacity(r) or 0) if r else 0


def at_top(r):
    """Whether a row's n* (capacity) is beyond the largest n tried (a lower bound)."""
    if r is not None and r.get("nstar"):
        return r["nstar"][0.9].value == float("inf")
    return r is not None and r["capacity"] is not None and r["capacity"] >= r["largest_tried"]


def cell_settings(r, manifest, edges):
    """race.settings, with a setting at the end of its range (RANGE_ENDS) left unflagged."""
    local = OrderedDict()
    s = settings(r, manifest, local)
    for (m, k, v, end), bs in local.items():
        if end == "lowest" and k in RANGE_ENDS and fnum(v) == RANGE_ENDS[k]:
            s = s.replace("%s=%s†" % (k, v), "%s=%s" % (k, v))
        else:
            edges.setdefault((m, k, v, end), []).extend(bs)
    return s


def cell(r, flops, manifest, edges):
    """'64 (d=32, lr=0.1) · 4.3k FLOPs/write', or '—'."""
    if r is None:
        return "—"
    s = cell_settings(r, manifest, edges)
    return (cap_text(r) + (" (%s)" % s if s else "") +
            (" · %s FLOPs/write" % fmt_flops(flops) if flops is not None else ""))


def edge_words(edges):
    """race.edge_words, with this section's names."""
    if not edges:
        return ""
    ranks = section_order()
    order = sorted(edges, key=lambda e: (ranks.index(e[0]) if e[0] in ranks else len(ranks), e[0], e[1], e[3]))
    items = ["%s %s = %s (the %s) at %s floats" % (possessive(short(m)), k, v, end,
                                                   ", ".join(str(b) for b in sorted(set(edges[(m, k, v, end)]))))
             for (m, k, v, end) in order]
    return ("† chosen at an end of its candidates (`memcap list`): " + "; ".join(items) + ". The candidates may "
            "stop short of the memory's best there, and its capacity is then a lower bound. (A setting at the end "
            "of its range — one pair per mini-batch, one step, no momentum, no forgetting, depth 2, a decay of 1 — "
            "is not flagged.)")


def points(pc):
    """The (noise, budget) points of one part, in the tables' order."""
    return [(n, b) for n in noise_order({n for _, n, _ in pc}) for b in sorted({b for _, nn, b in pc if nn == n})]


def table(pc, flops, manifest, edges):
    """One part's capacity table: memories (rows) by (noise, budget) (columns), as the modern study's table."""
    pts = points(pc)
    lines = ["| memory | " + " | ".join("%s, %d floats" % (noise_words(n), b) for n, b in pts) + " |",
             "|---|" + "---|" * len(pts)]
    for m in memory_order(m for m, _, _ in pc):
        lines.append("| %s | %s |" % (label(m), " | ".join(cell(pc.get((m, n, b)), flops.get((m, n, b)), manifest,
                                                                 edges) for n, b in pts)))
    return lines


def best(pc, memories, noise, b):
    """(the memories among `memories` with the largest n* at a point — and those tied with it: the paired
    ratio interval holds 1 —, the first's row)."""
    at = [m for m in memory_order(memories) if (m, noise, b) in pc]
    if not at:
        return [], None
    first = max(at, key=lambda m: cap_of(pc[(m, noise, b)]))
    top = pc[(first, noise, b)]
    ms = [m for m in at if m == first or (cap_of(top) and cap_of(pc[(m, noise, b)]) and order(top, pc[(m, noise, b)]) == 0)
          or (not cap_of(top) and not cap_of(pc[(m, noise, b)]))]
    return ms, top


def against(a, c):
    """A capacity row against another, in words: n* over n* with its paired interval, 'a tie (×1.02 [0.95,
    1.10])' where the interval holds 1, 'more', 'fewer' where one is below the range — a ratio at the
    largest n tried marked as a bound."""
    x, y = cap_of(a), cap_of(c)
    if not x or not y:
        return "equal" if x == y else "more" if x > y else "fewer"
    if at_top(a) and at_top(c):
        return "equal, both ≥ (the largest n tried)"
    r = shared_compare(a, c)
    return ("a tie (%s)" if r.tie() else "%s") % crossing_ratio(r)


def compare(caps):
    """[(part, noise, budget, deep memories, deep row, matrix memories, matrix row)]: at every point with
    both, the better deep MLP memory against the best matrix memory."""
    out = []
    for p, pc in caps.items():
        for noise, b in points(pc):
            dm, dr = best(pc, deep_mlp(), noise, b)
            mm, mr = best(pc, MATRIX, noise, b)
            if dm and mm:
                out.append((p, noise, b, dm, dr, mm, mr))
    return out


def equal_delta(pc):
    """(points where TTT-Linear and DeltaNet both ran, those where their n* differ — the paired ratio
    interval does not hold 1 —, those where
    both have a capacity and TTT-Linear's chosen lr is half DeltaNet's chosen beta — one-pair batches and
    one step are the delta rule at beta = 2 lr —, those where both have a capacity)."""
    both = [(n, b) for n, b in points(pc) if ("ttt_linear", n, b) in pc and ("delta", n, b) in pc]
    differ = [(n, b) for n, b in both if order(pc[("ttt_linear", n, b)], pc[("delta", n, b)]) != 0]
    chosen = [(n, b) for n, b in both if pc[("ttt_linear", n, b)]["spec_at_capacity"] and
              pc[("delta", n, b)]["spec_at_capacity"]]
    half = [(n, b) for n, b in chosen if twice_lr(pc[("ttt_linear", n, b)]["spec_at_capacity"],
                                                  pc[("delta", n, b)]["spec_at_capacity"])]
    return both, differ, half, chosen


def twice_lr(ttt_spec, delta_spec):
    """Whether a TTT-Linear spec of one-pair batches and one step has lr = beta / 2 of a DeltaNet spec."""
    t, d = spec_params(ttt_spec), spec_params(delta_spec)
    if t.get("batch", "1") != "1" or t.get("steps", "1") != "1" or "lr" not in t or "beta" not in d:
        return False
    return abs(2 * fnum(t["lr"]) - fnum(d["beta"])) <= 1e-9 * max(1.0, fnum(d["beta"]))


def part_words(part, pc, comparison):
    """The per-float sentence of one part: the better deep MLP memory against the best matrix memory at each
    point, and how often TTT-Linear's n* ties DeltaNet's (capacity.order)."""
    text = []
    items = ["%s, %d floats: %s %s against %s %s (%s)" % (
        noise_words(n), b, names(dm), cap_text(dr), names(mm), cap_text(mr), against(dr, mr))
        for p, n, b, dm, dr, mm, mr in comparison if p == part]
    if items:
        text.append("Per float (at equal state the ratio of capacities), the better deep MLP memory (%s) against "
                    "the best matrix memory (%s): %s." % (names(deep_mlp()), names(MATRIX), "; ".join(items)))
    both, differ, half, chosen = equal_delta(pc)
    if both:
        text.append("TTT-Linear's n* ties %s (the paired ratio interval holds 1) at %d of %d points%s%s." % (
            possessive(short("delta")), len(both) - len(differ), len(both),
            "" if not differ else " (not at %s)" % "; ".join(
                "%s, %d floats: %s against %s" % (noise_words(n), b, cap_text(pc[("ttt_linear", n, b)]),
                                                  cap_text(pc[("delta", n, b)])) for n, b in differ),
            ", and its chosen lr is half %s chosen beta (the delta rule at beta = 2 lr) at %d of the %d where both "
            "have a capacity" % (possessive(short("delta")), len(half), len(chosen)) if chosen else ""))
    return " ".join(text)


def flops_ratios(caps, flops):
    """{deep memory: [its FLOPs per write / DeltaNet's]} at the points where both have a capacity and a cost."""
    out = OrderedDict()
    for p, pc in caps.items():
        fl = flops.get(p, {})
        for noise, b in points(pc):
            f0 = fl.get(("delta", noise, b))
            for m in deep():
                f = fl.get((m, noise, b))
                if f and f0:
                    out.setdefault(m, []).append(f / f0)
    return out


def answer(comparison, ratios):
    """Two sentences: whether a deep memory stores more per float than the best matrix memory anywhere, and
    what its writes cost against the delta rule's."""
    if not comparison:
        return ""
    more = [c for c in comparison if cap_of(c[4]) > cap_of(c[6])]
    equal = [c for c in comparison if cap_of(c[4]) == cap_of(c[6])]
    fewer = len(comparison) - len(more) - len(equal)
    per = [cap_of(c[4]) / cap_of(c[6]) for c in comparison if cap_of(c[4]) and cap_of(c[6])]
    median = (", a median %s of the best matrix memory's capacity (at the %d points where both have one)" % (
        fmt_ratio(statistics.median(per), 1.0), len(per))) if per else ""
    if more:
        rest = list_words(["as many at %d" % len(equal)] * bool(equal) + ["fewer at %d" % fewer] * bool(fewer))
        first = ("A deep MLP memory (%s) stores more per float than the best of %s at %d of the %d (task, noise, "
                 "budget) points: %s%s%s." % (
                     names(deep_mlp()), names(MATRIX), len(more), len(comparison), "; ".join(
                         "%s at %s, %d floats (%s %s against %s %s)" % (
                             PARTS[p], noise_words(n), b, names(dm), cap_text(dr), names(mm),
                             cap_text(mr)) for p, n, b, dm, dr, mm, mr in more),
                     "; elsewhere it stores %s" % rest if rest else "", median))
    else:
        mlp = deep_mlp()
        neither = " nor ".join(short(m) for m in mlp) if len(mlp) == 2 else names(mlp)
        first = ("Neither %s stores more per float than the best of %s on any task part: the better of them stores "
                 "%s %d (task, noise, budget) points%s." % (
                     neither, names(MATRIX), ("as many at %d and fewer at %d of the" % (len(equal), fewer)) if equal
                     else "fewer pairs at all", len(comparison), median))
    mlp = deep_mlp()
    rs = [(m, ratios[m]) for m in mlp + tuple(m for m in deep() if m not in mlp) if ratios.get(m)]
    if not rs:
        return first
    second = ("The deep memories' writes cost, in FLOPs per write against %s at the same points (each at its "
              "capacity n and width, `memcap cost`), a median %s." % (possessive(short("delta")), list_words(
                  ["%s for %s (%d points)" % (fmt_ratio(statistics.median(v), 1.0), short(m), len(v)) for m, v in rs])))
    return first + " " + second


# ------------------------------------------------------------------ mini-batch and depth

def apart_table(apart, caps, flops_main, costs, manifest, edges, seeds=None):
    """(lines, [(memory, noise, budget, raced key, raced row, main row)]): the block racing the mini-batch
    size (TTT) or the depth (Titans), beside the main block's capacity at its budget."""
    if not apart:
        return [], []
    acaps, _ = capacity_rows(apart, "frontier", seeds)
    specs = task_specs(apart)
    main = caps.get(("assoc_recall", "passes=1"), {})
    lines = ["| memory | raced | noise | floats | raced: capacity (settings)%s | main block |" % (
        " · FLOPs/write" if costs else ""), "|---|---|---|---|---|---|"]
    out = []
    by = OrderedDict(((base(r["memory_spec"]), r["noise"], r["budget_floats"]), r) for r in acaps)
    for m in memory_order(m for m, _, _ in by):
        for noise in noise_order({n for mm, n, _ in by if mm == m}):
            for b in sorted({bb for mm, n, bb in by if mm == m and n == noise}):
                r = by[(m, noise, b)]
                key = next((k for k, v in spec_params(r["memory_spec"]).items() if k in TUNED_APART and is_raced(v)),
                           "?")
                mr = main.get((m, noise, b))
                fixed = spec_params(mr["spec_at_capacity"]).get(key) if mr and mr["spec_at_capacity"] else None
                mc = "—" if mr is None else (cap_text(mr) + (" (%s=%s)" % (key, fixed) if fixed else "") + (
                    " · %s FLOPs/write" % fmt_flops(flops_main.get((m, noise, b)))
                    if flops_main.get((m, noise, b)) is not None else ""))
                lines.append("| %s | %s | %s | %d | %s | %s |" % (
                    label(m), key, noise_words(noise), b,
                    cell(r, flops_at(r, "assoc_recall", specs, costs), manifest, edges), mc))
                out.append((m, noise, b, key, r, mr))
    return lines, out


def overwrite_noise(comparison):
    """The better deep MLP memory's n* over the best matrix memory's on the overwrite parts under noise:
    the range of the ratios ("×0.20 to ×0.31")."""
    rs = [cap_of(c[4]) / cap_of(c[6]) for c in comparison
          if c[0][0] == "overwrite_recall" and c[1] != "cosine=1" and cap_of(c[4]) and cap_of(c[6])]
    if not rs:
        return "—"
    return "×%.2f" % rs[0] if min(rs) == max(rs) else "×%.2f to ×%.2f" % (min(rs), max(rs))


def apart_readme(pairs):
    """The README's words on each raced mini-batch or depth against the main block: "TTT-MLP batch = 4,
    no noise: 18 [<4, 25] against 21 [16, 25] at batch = 1, a tie (×0.86 [...])"."""
    out = []
    for m, n, b, k, r, mr in pairs:
        if mr is None:
            continue
        v = spec_params(r["spec_at_capacity"]).get(k) if r["spec_at_capacity"] else "?"
        fixed = spec_params(mr["spec_at_capacity"]).get(k) if mr["spec_at_capacity"] else None
        out.append("%s %s = %s, %s: %s against %s%s, %s" % (
            short(m), k, v, noise_words(n, short=True), cap_text(r), cap_text(mr),
            " at %s = %s" % (k, fixed) if fixed else "", against(r, mr)))
    return "; ".join(out) or "—"


def apart_words(pairs):
    """How the raced mini-batch or depth moves n* against the main block's (capacity.order: equal where the
    paired ratio interval holds 1)."""
    pairs = [p for p in pairs if p[5] is not None]
    if not pairs:
        return ""
    tally = OrderedDict([("higher", 0), ("equal", 0), ("lower", 0)])
    for m, n, b, k, r, mr in pairs:
        o = order(r, mr) if cap_of(r) and cap_of(mr) else (cap_of(r) > cap_of(mr)) - (cap_of(r) < cap_of(mr))
        tally["higher" if o > 0 else "equal" if o == 0 else "lower"] += 1
    chosen = OrderedDict()
    for m, n, b, k, r, mr in pairs:
        v = spec_params(r["spec_at_capacity"]).get(k) if r["spec_at_capacity"] else None
        if v is not None:
            chosen.setdefault((m, k), []).append(v)
    counts = list_words(["%s at %d" % (w, c) for w, c in tally.items() if c])
    picks = "; ".join("%s %s = %s" % (short(m), k, "/".join(OrderedDict.fromkeys(vs))) for (m, k), vs in chosen.items())
    return ("With them raced, n* against the main block's is %s (equal: the paired ratio interval holds 1) of the "
            "%d (memory, noise) points%s." %
            (counts, len(pairs), "; chosen: " + picks if picks else ""))


# ------------------------------------------------------------------ the section

def load(ctx):
    """read's tuple and the per-seed index of its rows; None when deep/deep_summary.csv is not there.
    Each row is bootstrapped over the seeds of the sweep it came from: the deep memories' over deep.csv's,
    the comparison rows' over their own study's (assoc_recall: modern.csv; the window and overwrites:
    streams.csv) — not over every per-seed CSV the report loaded (crossing.SEEDS merges a cell two
    sweeps both ran: the main job's, modern's and streams' assoc_recall)."""
    for path in ("deep/deep.csv", "modern/modern.csv", "streams/streams.csv"):  # per seed: the crossings' intervals (crossing.SEEDS)
        load_seeds(os.path.join(ctx.reports_dir, path))
    data = read(ctx.reports_dir)
    if not data[0]:
        return None
    seeds = {}
    for path, tasks in (("modern/modern.csv", ("assoc_recall",)), ("streams/streams.csv", ("recent_recall", "overwrite_recall"))):
        seeds.update((k, v) for k, v in read_seeds(os.path.join(ctx.reports_dir, path)).items()
                     if base(k[1]) in tasks and base(k[0]) in COMPARE)
    seeds.update(read_seeds(os.path.join(ctx.reports_dir, "deep", "deep.csv")))
    return data + (seeds,)


def compute(data):
    """Plain rows (memcap_report.verdict): the deep memories' capacity points (the comparison memories'
    are their own studies' rows)."""
    return part_rows(part_capacities(data[0], (), data[5]), "deep")


def render(data, rows_, ctx):
    main, apart, other, costs, manifests, seeds_index = data
    rows = main + other
    caps = capacities(rows, seeds_index)
    specs = task_specs(rows)
    flops = OrderedDict((p, {k: flops_at(r, p[0], specs, costs) for k, r in pc.items()}) for p, pc in caps.items())
    flops = OrderedDict((p, {k: f for k, f in fl.items() if f is not None}) for p, fl in flops.items())
    edges = OrderedDict()
    seeds = sorted({r["seeds"] for r in main}, key=int)
    desc = task_words([r for r in main if base(r["task_spec"]) != "assoc_recall"])
    beside = memory_order(base(r["memory_spec"]) for r in other)
    sources = OrderedDict()  # the study each comparison row came from: load's rule
    for r in other:
        sources.setdefault("modern" if base(r["task_spec"]) == "assoc_recall" else "streams", set()).add(
            base(r["task_spec"]))
    where = ["`reports/%s/` (%s)" % (d, list_words(sorted(ts))) for d, ts in sources.items()]
    text = ["## Memories that are networks: TTT and Titans at equal state", "",
            "TTT-Linear (a linear map trained by gradient steps while it reads), TTT-MLP (a two-layer MLP) and "
            "Titans' memory (an MLP with momentum and a forgetting gate) at equal state floats%s. A deep memory's "
            "state counts every weight it updates while writing, the "
            "momentum buffer (Titans) and the pending pairs of an unfinished mini-batch. Every memory at its best "
            "width and settings, chosen on tuning seeds disjoint from the %s scored seeds "
            "(`scripts/studies/deep/deep.ini`, `reports/deep/`)%s. Capacity: n* [95%% interval], where mean accuracy "
            "(recent_recall: window W, over its lags) crosses 90%%, interpolated in log n, the interval from a "
            "bootstrap over the scored seeds; `≥` marks the largest n tried (a lower bound), `<` the "
            "smallest. In brackets the width and settings chosen there%s." % (
                (", beside %s from %s" % (names(beside), list_words(where))) if beside else "", "/".join(seeds),
                "; %s" % desc if desc else "",
                "; after the dot the FLOPs per written pair there (`memcap cost`, `reports/deep/costs.csv`: the "
                "cost model, not a timing)" if costs else ""), ""]
    deep = {base(r["memory_spec"]) for r in main}
    text += [resolved_line([r for pc in caps.values() for (m, _, _), r in pc.items() if m in deep],
                           "Resolution (the deep memories)"), ""]
    comparison = compare(caps)
    for p, pc in caps.items():
        text += ["### %s" % PARTS[p], ""] + table(pc, flops.get(p, {}), manifests[p], edges) + [""]
        w = part_words(p, pc, comparison)
        text += [w, ""] if w else []
    lines, pairs = apart_table(apart, caps, flops.get(("assoc_recall", "passes=1"), {}), costs,
                               manifests["apart"], edges, seeds_index)
    if lines:
        bs = sorted({p[2] for p in pairs})
        text += ["### Mini-batch and depth at %s floats" % list_words([str(b) for b in bs]), "",
                 "assoc_recall with TTT's mini-batch size or Titans' depth raced too (the pending pairs of an "
                 "unfinished mini-batch and a deeper MLP's weights are state, and every gradient of a mini-batch is "
                 "taken at the weights it starts from), beside the main block's capacity at the same budget, with "
                 "the value that block fixes.", ""] + lines + [""]
        w = apart_words(pairs)
        text += [w, ""] if w else []
    ew = edge_words(edges)
    text += [ew, ""] if ew else []
    ans = answer(comparison, flops_ratios(caps, flops))
    return text + (["**The answer.** " + ans, ""] if ans else [])


def section(reports_dir):
    """The section's lines ([] when deep/deep_summary.csv is not there)."""
    return run(sys.modules[__name__], Context(reports_dir))


# ------------------------------------------------------------------ the README

README_PARTS = OrderedDict([  # the README's rows: (part, whether its rows under noise are in the table)
    (("assoc_recall", "passes=1"), ("assoc_recall", True)),
    (("recent_recall", ""), ("recent window", True)),
    (("overwrite_recall", "rewritten"), ("overwrite, rewritten keys", False)),
    (("overwrite_recall", "untouched"), ("overwrite, untouched keys", False)),
])


def readme(data, rows_, ctx):
    """reports/deep/README.md's computed parts (its template: README.md.in): the capacity table, a row per
    part and noise, a column per memory, a cell's capacities at the budgets in order."""
    main, other, costs, seeds_index = data[0], data[2], data[3], data[5]
    caps = capacities(main + other, seeds_index)
    memories = memory_order(m for pc in caps.values() for m, _, _ in pc)
    budgets = sorted({b for pc in caps.values() for _, _, b in pc})
    lines = ["| task | noise | floats | %s |" % " | ".join("cache" if m in caches() else short(m) for m in memories),
             "|---|---|---|" + "---|" * len(memories)]
    for part, (name, noisy) in README_PARTS.items():
        pc = caps.get(part, {})
        for noise in noise_order({n for _, n, _ in pc}):
            if noise != "cosine=1" and not noisy:
                continue
            cells = [" / ".join(cap_text(pc[(m, noise, b)]) if (m, noise, b) in pc else "—" for b in budgets)
                     for m in memories]
            lines.append("| %s | %s | %s | %s |" % (name, "none" if noise == "cosine=1" else noise_words(noise, short=True),
                                                   " / ".join(str(b) for b in budgets), " | ".join(cells)))
    # the numbers of the sentences: the better deep MLP memory against the best matrix memory, TTT-Linear
    # against DeltaNet, the writes' FLOPs against DeltaNet's (as render computes them)
    specs = task_specs(main + other)
    flops = OrderedDict((p, {k: f for k, f in ((k, flops_at(r, p[0], specs, costs)) for k, r in pc.items())
                             if f is not None}) for p, pc in caps.items())
    comparison = compare(caps)
    per = [cap_of(c[4]) / cap_of(c[6]) for c in comparison if cap_of(c[4]) and cap_of(c[6])]
    fewer = [cap_of(c[6]) / cap_of(c[4]) for c in comparison if cap_of(c[4]) and cap_of(c[6])]
    equal = [0, 0]
    for pc in caps.values():
        both, differ, _, _ = equal_delta(pc)
        equal[0] += len(both) - len(differ)
        equal[1] += len(both)
    ratios = flops_ratios(caps, flops)
    mlp_costs = [statistics.median(ratios[m]) for m in deep_mlp() if ratios.get(m)]

    def accuracy(m, noise, budget=4096, n=64):  # mean ± SE at one assoc_recall point, written once
        rs = [r for r in main + other if base(r["memory_spec"]) == m and base(r["task_spec"]) == "assoc_recall"
              and passes(r["task_spec"]) == "1" and noise_key(r["task_spec"]) == noise
              and int(r["budget_floats"]) == budget and int(r["n"]) == n]
        if len(rs) != 1:
            return "—"
        mean = 100 * fnum(rs[0]["accuracy_mean_frac"])
        return "%s%% ± %.1f%%" % ("100" if mean == 100 else "%.1f" % mean, 100 * fnum(rs[0]["accuracy_se_frac"]))
    acc = {"acc_%s%s" % (m, "_noise" if noise != "cosine=1" else ""): accuracy(m, noise)
           for m in ("ttt_mlp", "titans", "delta") for noise in ("cosine=1", "cosine=0.72")}

    def times(x):
        return ("%.0f" % x) if abs(x - round(x)) < 1e-9 else ("%.1f" % x)
    _, apart_pairs = apart_table(data[1], caps, {}, costs, data[4]["apart"], OrderedDict(), seeds_index)
    return {"capacity_table": "\n".join(lines), "apart": apart_readme(apart_pairs),
            "overwrite_noise": overwrite_noise(comparison),
            "points": str(len(comparison)),
            "fewer_range": "%s–%s" % (times(min(fewer)), times(max(fewer))) if fewer else "—",
            "median_ratio": fmt_ratio(statistics.median(per), 1.0).lstrip("×") if per else "—",
            "equal_points": ("all %d" % equal[1]) if equal[0] == equal[1] else "%d of %d" % tuple(equal),
            "cost_ttt_mlp": "%.1f×" % statistics.median(ratios["ttt_mlp"]) if ratios.get("ttt_mlp") else "—",
            "cost_titans": "%.1f×" % statistics.median(ratios["titans"]) if ratios.get("titans") else "—",
            "cost_range": "%.1f–%.1f×" % (min(mlp_costs), max(mlp_costs)) if mlp_costs else "—", **acc}
