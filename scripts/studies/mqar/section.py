"""Zoology's recall, untrained (mqar/mqar_summary.csv, from scripts/studies/mqar/mqar.ini): every memory
on `mqar` (every token of zoology's stream written, each query read as it arrives) beside
`assoc_recall` (the n pairs alone, read after the last) at the same n and budgets, each at the
width and settings the race chose; the cost of writing every token as the ratio of the two n*; and
what splitting one budget over h heads does to the grid's and the cache's capacity.

Rows are grouped by capacity.capacity_rows (frame "frontier": the tuned keys read `best`); a
memory with `heads=h` (h > 1) is its own row, its h = 1 the memory's own row at the same budget."""
import os
import sys
from collections import OrderedDict

from memcap_report.capacity import cap_text, capacity_rows, nstar
from memcap_report import crossing
from memcap_report.crossing import fmt_est, fmt_ratio, load_seeds, ratio
from memcap_report.common import (Context, SUMMARY_COLUMNS, base, caches, fnum, label, list_words, name_order, optional_csv,
                                  param, read_manifest, run, spec_params, state_bits_of)
from memcap_report.race import edge_words, settings

TASKS = ("mqar", "assoc_recall")
SAME_N = (16, 64)  # the n at which the two tasks' accuracies are set side by side
HEADS = (1, 2, 4, 8)


def heads_of(spec):
    """h of a memory spec (1 when it has no heads key)."""
    return int(spec_params(spec).get("heads", "1"))


def plain(spec):
    """A memory spec without its heads key: the memory the heads split."""
    p = spec_params(spec)
    p.pop("heads", None)
    return base(spec) + (":" + ",".join("%s=%s" % kv for kv in p.items()) if p else "")


def capacities(summary):
    """{(backend, h, task, budget): capacity row} along n (n* at 0.5, 0.9, 0.99 with intervals)."""
    rows, _ = capacity_rows(summary, "frontier")
    return OrderedDict(((base(r["memory_spec"]), heads_of(r["memory_spec"]), base(r["task"]), r["budget_floats"]), r)
                       for r in rows if base(r["task"]) in TASKS)


def accuracy_at(summary, memory, h, task, budget, n):
    """Mean accuracy (over its seeds) of the row at (memory, h, task, budget, n); None when not run."""
    for r in summary:
        if (base(r["memory_spec"]) == memory and heads_of(r["memory_spec"]) == h and base(r["task_spec"]) == task
                and int(r["budget_floats"]) == budget and int(r["n"]) == n and r["errors"] == "0"):
            return fnum(r["accuracy_mean_frac"])
    return None


def state_at(r):
    """(state floats, state bytes) of the cell at the capacity (the width chosen there); the largest n
    tried when none passes."""
    at = r["at_capacity"] or max(r["group"], key=lambda x: int(x["n"]))
    bits = state_bits_of(at)
    return int(at["state_floats"]), (bits // 8 if bits is not None else None)


def pct(a):
    return "–" if a is None else "%.0f%%" % (100 * a) if a >= 0.995 or a < 0.005 else "%.1f%%" % (100 * a)


def capacity_table(summary, caps, manifest=None):
    """(lines, edges): per memory and budget, mqar's n* beside assoc_recall's, the ratio of the two
    (unpaired interval: different tasks), the state at mqar's capacity and the accuracies at SAME_N."""
    budgets = sorted({b for (_, h, _, b) in caps if h == 1})
    memories = name_order(m for (m, h, t, _) in caps if h == 1 and t == "mqar")
    edges = OrderedDict()
    head = ("| memory | budget | state floats | state bytes | mqar n* (0.9) | mqar n* (0.5) | assoc_recall n* (0.9) | "
            "mqar / assoc_recall | " + " | ".join("accuracy at n = %d: mqar, assoc_recall" % n for n in SAME_N) + " |")
    lines = [head, "|---|---:|---:|---:|---|---|---|---|" + "---|" * len(SAME_N)]
    for m in memories:
        for b in budgets:
            q, a = caps.get((m, 1, "mqar", b)), caps.get((m, 1, "assoc_recall", b))
            if q is None:
                continue
            floats, nbytes = state_at(q)
            s = settings(q, manifest, edges)
            cells = [label(m), str(b), str(floats), str(nbytes) if nbytes is not None else "–",
                     cap_text(q) + (" (%s)" % s if s else ""), cap_text(q, 0.5),
                     cap_text(a) if a else "–", fmt_ratio(ratio(q["curve"], a["curve"], 0.9, paired=False)) if a else "–"]
            for n in SAME_N:
                cells.append("%s, %s" % (pct(accuracy_at(summary, m, 1, "mqar", b, n)),
                                         pct(accuracy_at(summary, m, 1, "assoc_recall", b, n))))
            lines.append("| " + " | ".join(cells) + " |")
    return lines, edges


def leaders(caps, task):
    """Per budget: the memories with the largest n* at 0.9 on task (those tied with it: a paired ratio
    interval holding 1), in name order, and the first's row."""
    out = OrderedDict()
    for b in sorted({b for (_, h, t, b) in caps if h == 1 and t == task}):
        rows = {m: r for (m, h, t, bb), r in caps.items() if h == 1 and t == task and bb == b}
        first = max(rows, key=lambda m: nstar(rows[m]))
        top = [m for m in name_order(rows) if m == first or (nstar(rows[m]) > 0 and ratio(rows[first]["curve"], rows[m]["curve"]).tie())]
        out[b] = (top, rows[first])
    return out


def ranking(caps, task, budget):
    """The memories of task at budget by n* at 0.9, largest first: [(memory, row)]."""
    rows = [(m, r) for (m, h, t, b), r in caps.items() if h == 1 and t == task and b == budget]
    return sorted(rows, key=lambda mr: (-nstar(mr[1]), name_order([x for x, _ in rows]).index(mr[0])))


def short(memory):
    return label(memory).split(" (")[0].split(" = ")[0]


def answer(caps):
    """The README's sentences: how far an untrained memory gets on mqar, and what writing every token costs."""
    out = OrderedDict()
    lead = leaders(caps, "mqar")
    out["mqar_leaders"] = "; ".join(
        ("at %d floats %s (n* %s)" % (b, list_words([short(m) for m in ms]), cap_text(r))) if nstar(r) > 0 else
        ("at %d floats none (every n* %s)" % (b, cap_text(r))) for b, (ms, r) in lead.items())
    order_words = []
    for b in sorted(lead):
        order_words.append("%d floats: %s" % (b, ", ".join("%s %s" % (short(m), cap_text(r, interval=False))
                                                           for m, r in ranking(caps, "mqar", b))))
    out["mqar_order"] = "; ".join(order_words)
    # budgets where no memory reaches 0.9 at any n tried: the best accuracy at the smallest n
    floors = []
    for b in sorted(lead):
        rows = [(m, r) for m, r in ranking(caps, "mqar", b)]
        if all(r["nstar"][0.9].value == -float("inf") for _, r in rows):
            smallest = min(r["smallest_tried"] for _, r in rows)
            best = max(rows, key=lambda mr: fnum(min(mr[1]["group"], key=lambda x: int(x["n"]))["accuracy_mean_frac"]))
            acc = fnum(min(best[1]["group"], key=lambda x: int(x["n"]))["accuracy_mean_frac"])
            floors.append("at %d floats no memory reaches 0.9 at any n, n = %d included (the most accurate there: %s, "
                          "%s)" % (b, smallest, short(best[0]), pct(acc)))
    out["floor"] = ("; ".join(floors) + ": the stream's T − 1 writes alone hold accuracy below 0.9 whatever n, "
                    "so the 0.5 column carries the comparison there") if floors else "every budget has a memory reaching 0.9"
    # the cost of writing every token: mqar's n* over assoc_recall's, per memory and budget
    costs = []
    for (m, h, t, b), q in caps.items():
        a = caps.get((m, 1, "assoc_recall", b))
        if h != 1 or t != "mqar" or a is None:
            continue
        costs.append((m, b, ratio(q["curve"], a["curve"], 0.9, paired=False)))
    below = [c for c in costs if not c[2].tie() and c[2].value < 1]
    above = [c for c in costs if not c[2].tie() and c[2].value > 1]
    tied = [c for c in costs if c[2].tie()]
    finite = [c for c in below if c[2].bound == ""]
    words = "mqar's n* is below assoc_recall's at %d of the %d (memory, budget) points" % (len(below), len(costs))
    if finite:
        lo = min(finite, key=lambda c: c[2].value)
        hi = max(finite, key=lambda c: c[2].value)
        words += (" (where both are measured, from %s, %s at %d floats, to %s, %s at %d floats)" %
                  (fmt_ratio(lo[2]), short(lo[0]), lo[1], fmt_ratio(hi[2]), short(hi[0]), hi[1]))
    if above:
        words += "; above it at %d (%s)" % (len(above), ", ".join("%s at %d floats, %s" % (short(m), b, fmt_ratio(r))
                                                                  for m, b, r in above))
    if tied:
        words += "; tied at %d (%s)" % (len(tied), ", ".join("%s at %d floats" % (short(m), b) for m, b, _ in tied))
    out["cost"] = words
    return out


def heads_table(caps):
    """(lines, rows): per memory split into heads (h > 1 rows present) and task, n* at 0.9 at each h
    and its ratio to h = 1 (paired: the same task, seeds and budget)."""
    split = name_order({m for (m, h, _, _) in caps if h > 1})
    budgets = sorted({b for (m, h, _, b) in caps if h > 1})
    lines = ["| memory | task | budget | " + " | ".join("h = %d" % h for h in HEADS) + " |",
             "|---|---|---:|" + "---|" * len(HEADS)]
    out = []
    for m in split:
        for t in TASKS:
            for b in budgets:
                one = caps.get((m, 1, t, b))
                if one is None:
                    continue
                cells = []
                for h in HEADS:
                    r = caps.get((m, h, t, b))
                    if r is None:
                        cells.append("–")
                        continue
                    text = cap_text(r) + (" (d=%d)" % r["d_at_capacity"] if r["d_at_capacity"] else "")
                    if h > 1:
                        rr = ratio(r["curve"], one["curve"])
                        text += ", %s" % ("tie" if rr.tie() else fmt_ratio(rr))
                        out.append((m, t, b, h, r, rr))
                    cells.append(text)
                lines.append("| %s | %s | %d | %s |" % (label(m), t, b, " | ".join(cells)))
    return lines, out


def heads_words(caps):
    """One sentence per memory and task: what h = 2, 4, 8 heads do to n* against one head."""
    _, rows = heads_table(caps)
    by = OrderedDict()
    for m, t, b, h, r, rr in rows:
        by.setdefault((m, t, b), []).append((h, rr))
    parts = []
    for (m, t, b), hs in by.items():
        parts.append("%s on %s at %d floats: %s" % (short(m), t, b, ", ".join(
            "h = %d %s" % (h, "ties one head" if rr.tie() else fmt_ratio(rr)) for h, rr in hs)))
    return "; ".join(parts)


# ------------------------------------------------------------------ zoology's variants and the stream's length
# (mqar_variants.ini: mqar:updates=u, forgetting_mqar; mqar:key_tokens=2, compositional_mqar; mqar:length=T at one n)

VARIANTS = OrderedDict([("forgetting", "updates"), ("compositional", "key_tokens")])


def variant_of(task_spec):
    """'forgetting', 'compositional' or 'length' (the plain stream at another T) of a variants row."""
    p = spec_params(task_spec)
    for name, key in VARIANTS.items():
        if key in p:
            return name
    return "length"


def variant_caps(variants):
    """{(backend, variant, budget): capacity row} of the variants along n."""
    rows, _ = capacity_rows([r for r in variants if variant_of(r["task_spec"]) != "length"], "frontier")
    return OrderedDict(((base(r["memory_spec"]), variant_of(r["task"]), r["budget_floats"]), r) for r in rows)


def variants_table(caps, vcaps):
    """Per memory and budget: the plain stream's n*, each variant's and its ratio to the plain one (unpaired)."""
    keys = name_order({m for (m, _, _) in vcaps})
    budgets = sorted({b for (_, _, b) in vcaps})
    specs = OrderedDict()
    for (m, v, b), r in vcaps.items():
        specs.setdefault(v, param(r["group"][0]["task_spec"], VARIANTS[v]))
    head = "| memory | budget | mqar n* (0.9) | mqar n* (0.5) | " + " | ".join(
        "%s (%s=%s) n* (0.9), ratio to mqar | %s n* (0.5)" % (v, VARIANTS[v], specs[v], v) for v in specs) + " |"
    lines = [head, "|---|---:|---|---|" + "---|---|" * len(specs)]
    for m in keys:
        for b in budgets:
            plain_row = caps.get((m, 1, "mqar", b))
            cells = [label(m), str(b)] + ([cap_text(plain_row), cap_text(plain_row, 0.5)] if plain_row else ["–", "–"])
            for v in specs:
                r = vcaps.get((m, v, b))
                if r is None:
                    cells += ["–", "–"]
                    continue
                text = cap_text(r)
                if plain_row:
                    rr = ratio(r["curve"], plain_row["curve"], 0.9, paired=False)
                    text += ", " + ("tie" if rr.tie() else fmt_ratio(rr))
                cells += [text, cap_text(r, 0.5)]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def length_curves(variants):
    """{(backend, budget): (n, crossing.Curve along T)} of the plain stream at several T and one n."""
    groups = OrderedDict()
    for r in variants:
        if variant_of(r["task_spec"]) != "length" or r["errors"] != "0":
            continue
        groups.setdefault((base(r["memory_spec"]), int(r["budget_floats"]), int(r["n"])), {}).setdefault(
            int(param(r["task_spec"], "length")), []).append([r])
    out = OrderedDict()
    for (m, b, n), by in groups.items():
        xs = sorted(by)
        out[(m, b)] = (n, crossing.Curve(xs, [by[x] for x in xs], crossing.SEEDS))
    return out


def length_table(variants):
    """Per memory and budget: mean accuracy at each T and T*, where it crosses 0.9 along T (log-interpolated,
    bootstrap interval over the seeds; ≥ the longest T tried, < the shortest)."""
    curves = length_curves(variants)
    if not curves:
        return [], curves
    lengths = sorted({int(x) for _, c in curves.values() for x in c.xs})
    n = next(iter(curves.values()))[0]
    lines = ["| memory | budget | " + " | ".join("T = %d" % t for t in lengths) + " | T* (0.9) |",
             "|---|---:|" + "---:|" * len(lengths) + "---|"]
    for m in name_order({m for m, _ in curves}):
        for b in sorted({bb for mm, bb in curves if mm == m}):
            _, c = curves[(m, b)]
            acc = dict(zip((int(x) for x in c.xs), c.point))
            est = crossing.estimates(c, (0.9,))[0.9]
            lines.append("| %s | %d | %s | %s |" % (label(m), b, " | ".join(pct(acc.get(t)) for t in lengths), fmt_est(est)))
    return lines, curves


# ------------------------------------------------------------------ the protocol

def load(ctx):
    """The study's summary and manifest; None when mqar/mqar_summary.csv is not there."""
    load_seeds(os.path.join(ctx.reports_dir, "mqar", "mqar.csv"))  # per seed: the crossings' intervals
    load_seeds(os.path.join(ctx.reports_dir, "mqar", "mqar_variants.csv"))
    summary = optional_csv(os.path.join(ctx.reports_dir, "mqar", "mqar_summary.csv"), SUMMARY_COLUMNS)
    if not summary:
        return None
    variants = optional_csv(os.path.join(ctx.reports_dir, "mqar", "mqar_variants_summary.csv"), SUMMARY_COLUMNS)
    return {"summary": summary, "variants": variants,
            "manifest": read_manifest(os.path.join(ctx.reports_dir, "mqar", "mqar.csv.manifest.json"))}


def compute(data):
    """No plain rows: the study's widths are raced over a shorter list than the frontier's (2..256), so its
    assoc_recall capacities do not enter the verdict; mqar is not the frontier's task."""
    return []


def render(data, rows, ctx):
    summary, manifest = data["summary"], data["manifest"]
    caps = capacities(summary)
    table, edges = capacity_table(summary, caps, manifest)
    words = answer(caps)
    hl, _ = heads_table(caps)
    seeds = sorted({r["seeds"] for r in summary}, key=int)
    return (["## Zoology's recall, untrained", "",
             "`mqar` (zoology's stream: every token written, each query read as it arrives, answers among all "
             "value symbols) beside `assoc_recall` (the n pairs alone) at the same n and budgets, every memory at "
             "the width (2..256) and settings chosen on tuning seeds disjoint from the %s scored seeds "
             "(`scripts/studies/mqar/mqar.ini`, `reports/mqar/`). n* [95%% interval]: where mean accuracy crosses "
             "0.9 (or 0.5), interpolated in log n, the interval from a bootstrap over the seeds; the ratio's "
             "interval is unpaired (two tasks). State: at the width chosen at mqar's capacity." % "–".join(
                 [seeds[0], seeds[-1]] if len(seeds) > 1 else seeds), ""] + table +
            ["", edge_words(edges), "",
             "The largest mqar n*: %s (%s). Writing every token: %s." % (words["mqar_leaders"], words["floor"], words["cost"]), "",
             "Heads at one budget (n* at 0.9, the width chosen, and the paired ratio to one head):", ""] + hl +
            [""] + variant_lines(data))


def variant_lines(data):
    """REPORT.md's lines on zoology's variants and the stream's length ([] without mqar_variants)."""
    variants = data.get("variants") or []
    if not variants:
        return []
    caps = capacities(data["summary"])
    lt, curves = length_table(variants)
    n = next(iter(curves.values()))[0] if curves else None
    return (["zoology's variants (`scripts/studies/mqar/mqar_variants.ini`): values that change (forgetting) and "
             "two-token keys (compositional), n* at 0.9 beside the plain stream's (unpaired ratio):", ""] +
            variants_table(caps, variant_caps(variants)) +
            (["", "The stream's length at n = %d: mean accuracy at each T and T*, where it crosses 0.9 along T:" % n, ""] + lt
             if lt else []) + [""])


def readme(data, rows, ctx):
    """reports/mqar/README.md's computed parts (its template: README.md.in)."""
    summary, manifest = data["summary"], data["manifest"]
    caps = capacities(summary)
    table, edges = capacity_table(summary, caps, manifest)
    hl, _ = heads_table(caps)
    words = answer(caps)
    variants = data.get("variants") or []
    lt, _ = length_table(variants)
    vcaps = variant_caps(variants)
    forget = [r for (m, v, b), r in vcaps.items() if v == "forgetting"]
    below = [r for r in forget if r["nstar"][0.9].value == -float("inf")]
    words["forgetting"] = ("forgetting's n* at 0.9 is below the smallest n tried for every memory at every budget"
                           if forget and len(below) == len(forget) else
                           "forgetting's n* at 0.9 is below the smallest n tried at %d of its %d (memory, budget) points" %
                           (len(below), len(forget)))
    return dict(words, capacity_table="\n".join(table), edges=edge_words(edges) or "No setting was chosen at an end of its candidates.",
                heads_table="\n".join(hl), heads=heads_words(caps),
                variants_table="\n".join(variants_table(caps, variant_caps(variants))) if variants else "(not swept)",
                length_table="\n".join(lt) if lt else "(not swept)")


def section(reports_dir):
    """The section's lines ([] when the study's summary is not there)."""
    return run(sys.modules[__name__], Context(reports_dir))
