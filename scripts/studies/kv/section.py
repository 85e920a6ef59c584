"""The KV cache at a byte budget (kv/kv_summary.csv, from scripts/studies/kv/kv.ini): every cache
policy (FIFO, attention sinks, H2O, TOVA, SnapKV, KNorm, random eviction, merging;
memories/softmax/kv_policy.hpp) and the compressed caches (KIVI, MLA) beside the best recurrent memories, untrained, at equal bytes of
state on mqar, associative, recent, overwrite and salient recall: capacity n* with intervals, and
which policy when.

Its numbers are at the study's own settings (one list of widths, the policies' settings at their
defaults), not the frontier's, so compute() gives "Which memory when" no rows."""
import os
import sys
from collections import OrderedDict

from memcap_report.capacity import cap_text, compare, nstar, part_capacities, part_family, resolved_line
from memcap_report.common import (Context, SUMMARY_COLUMNS, caches, list_words, memory_info, optional_csv, read_manifest,
                                  run)
from memcap_report.crossing import fmt_ratio, load_seeds, read_seeds

# The study's cache policies (softmax = FIFO) and compressed caches (KIVI, MLA) are the memories it ran that
# memcap's table calls caches (common.caches(), in the table's order); the rest are the recurrent memories.
TASKS = ("mqar", "assoc_recall", "recent_recall", "overwrite_recall", "salient_recall")


def name(m):
    """A memory's name here: the policy's published name and its backend ("H2O (`h2o`)"); FIFO is the
    softmax cache."""
    if m == "softmax":
        return "FIFO (`softmax`)"
    published = memory_info(m).get("published")
    return "%s (`%s`)" % (published, m) if published else "`%s`" % m


def short(m):
    return "FIFO" if m == "softmax" else (memory_info(m).get("published") or m)


def load(ctx):
    """The study's summary, manifest and per-seed index; None when kv/kv_summary.csv is not there. The
    intervals are bootstrapped over this study's seeds only: a cell another sweep also ran (DeltaNet's,
    in the streams study) would otherwise be resampled over both sweeps' seeds (crossing.SEEDS merges them)."""
    per_seed = os.path.join(ctx.reports_dir, "kv", "kv.csv")
    load_seeds(per_seed)  # per seed: the crossings' intervals
    summary = optional_csv(os.path.join(ctx.reports_dir, "kv", "kv_summary.csv"), SUMMARY_COLUMNS)
    if not summary:
        return None
    return {"summary": summary, "seeds": read_seeds(per_seed) if os.path.exists(per_seed) else None,
            "manifest": read_manifest(os.path.join(ctx.reports_dir, "kv", "kv.csv.manifest.json"))}


def capacities(summary, seeds=None):
    """{task: {(memory, budget): capacity row}}: each task read as "Which memory when" reads it (a task
    with slot parts on all of them at once), in TASKS' order; `seeds`: load's per-seed index (None:
    every per-seed CSV the report loaded)."""
    out = OrderedDict()
    for part, caps in part_capacities(summary, (), seeds).items():
        task = part_family(part)
        if task not in TASKS:
            continue
        out[task] = OrderedDict(((m, int(b)), r) for (m, _noise, b), r in caps.items())
    return OrderedDict((t, out[t]) for t in TASKS if t in out)


def memories_of(caps):
    ms = OrderedDict.fromkeys(m for per in caps.values() for m, _ in per)
    return [m for m in caches() if m in ms] + [m for m in ms if m not in caches()]


def budgets_of(per):
    return sorted({b for _, b in per})


def capacity_tables(caps):
    """One Markdown table per task: a row per memory, a column per budget, n* [95% interval]."""
    lines = []
    for task, per in caps.items():
        budgets = budgets_of(per)
        lines += ["**%s**" % task, "", "| memory | %s |" % " | ".join("%d floats" % b for b in budgets),
                  "|---|" + "---|" * len(budgets)]
        for m in memories_of(caps):
            cells = [cap_text(per[(m, b)]) if (m, b) in per else "—" for b in budgets]
            lines.append("| %s | %s |" % (name(m), " | ".join(cells)))
        lines.append("")
    return lines[:-1]


def leaders(per, b, pool):
    """(leaders, first): the memories of `pool` with the largest n* at budget b and those tied with it
    (a paired ratio interval holding 1), and the first's row; ([], None) when none was measured."""
    rows = {m: per[(m, b)] for m in pool if (m, b) in per}
    if not rows:
        return [], None
    first = max(rows, key=lambda m: nstar(rows[m]))
    if nstar(rows[first]) == 0:  # none reaches the threshold at the smallest n: no leader
        return [], rows[first]
    top = [m for m in rows if m == first or (nstar(rows[m]) > 0 and compare(rows[first], rows[m]).tie())]
    return top, rows[first]


def points(caps):
    """Per (task, budget): the leading policies and their first row, FIFO's row, the leading recurrent
    memories and their first row."""
    out = OrderedDict()
    ms = memories_of(caps)
    recurrent = [m for m in ms if m not in caches()]
    for task, per in caps.items():
        for b in budgets_of(per):
            pol, pol_row = leaders(per, b, [m for m in ms if m in caches()])
            rec, rec_row = leaders(per, b, recurrent)
            out[(task, b)] = (pol, pol_row, per.get(("softmax", b)), rec, rec_row)
    return out


def versus(a, b):
    """'×1.56 [1.31, 1.84]' of a's n* over b's (paired), prefixed 'a tie, ' when its interval holds 1."""
    if a is None or b is None:
        return "—"
    r = compare(a, b)
    return ("a tie, " if r.tie() else "") + fmt_ratio(r)


def lead_text(ms, row):
    """'DeltaNet: 53 [50, 55]'; 'none: <4' when no memory of the pool reaches the threshold."""
    return "—" if row is None else "%s: %s" % (short(ms[0]) if ms else "none", cap_text(row))


def which_table(pts):
    lines = ["| task | floats | leading policy: n* | tied with it | over FIFO | leading recurrent: n* | "
             "policy over recurrent |", "|---|---|---|---|---|---|---|"]
    for (task, b), (pol, pol_row, fifo, rec, rec_row) in pts.items():
        if pol_row is None:
            continue
        if not pol:  # every policy below the smallest n
            lines.append("| %s | %d | none: %s | — | — | %s | %s |" % (
                task, b, cap_text(pol_row), lead_text(rec, rec_row), versus(pol_row, rec_row)))
            continue
        lines.append("| %s | %d | %s: %s | %s | %s | %s | %s |" % (
            task, b, short(pol[0]), cap_text(pol_row), ", ".join(short(m) for m in pol[1:]) or "—",
            "—" if pol[0] == "softmax" else versus(pol_row, fifo),
            lead_text(rec, rec_row), versus(pol_row, rec_row)))
    return lines


COMPRESSED = ("kivi", "mla")


def compressed_table(caps):
    """KIVI and MLA against FIFO at equal bytes: per task and budget, each one's n* [95% interval],
    FIFO's, and the paired ratio of n* over FIFO's."""
    lines = ["| task | floats | FIFO: n* | KIVI: n* | KIVI over FIFO | MLA: n* | MLA over FIFO |",
             "|---|---|---|---|---|---|---|"]
    for task, per in caps.items():
        for b in budgets_of(per):
            fifo = per.get(("softmax", b))
            if fifo is None:
                continue
            cells = []
            for m in COMPRESSED:
                row = per.get((m, b))
                cells += ["—", "—"] if row is None else [cap_text(row), versus(row, fifo)]
            lines.append("| %s | %d | %s | %s |" % (task, b, cap_text(fifo), " | ".join(cells)))
    return lines


def answer(pts):
    """Two sentences: which policy leads on which tasks, and where a recurrent state beats every policy
    (or the reverse)."""
    if not pts:
        return ""
    per_task = OrderedDict()
    for (task, b), (pol, *_rest) in pts.items():
        per_task.setdefault(task, OrderedDict())
        for m in pol:
            per_task[task][m] = per_task[task].get(m, 0) + 1
    lead = []
    for task, wins in per_task.items():
        n = sum(1 for (t, _b) in pts if t == task)
        always = [short(m) for m, w in wins.items() if w == n]
        lead.append("%s: %s" % (task, list_words(always) if always else
                                "%s (at some budgets)" % list_words([short(m) for m in wins]) if wins else
                                "none (every policy below the smallest n tried)"))
    verdicts = OrderedDict()  # task: {"recurrent"/"policy"/"tie": [budgets]}
    for (task, b), (pol, pol_row, _fifo, rec, rec_row) in pts.items():
        if rec_row is None or pol_row is None:
            continue
        r = compare(pol_row, rec_row)
        kind = "tie" if r.tie() else "policy" if r.value > 1 else "recurrent"
        verdicts.setdefault(task, OrderedDict()).setdefault(kind, []).append(b)
    said = OrderedDict((k, []) for k in ("policy", "recurrent", "tie"))
    for task, kinds in verdicts.items():
        n = sum(len(v) for v in kinds.values())
        for kind, bs in kinds.items():
            said[kind].append(task + ("" if len(bs) == n else " at %s floats" % list_words([str(b) for b in bs])))
    return ("The policy with the largest n* at every budget (ties, a paired ratio interval holding 1, included) — %s. "
            "The best policy stores more than the best recurrent memory at equal bytes on %s; a recurrent state beats "
            "every policy on %s; they tie on %s." % (
                "; ".join(lead), words(said["policy"]), words(said["recurrent"]), words(said["tie"])))


def words(items):
    return list_words(items) if items else "no task"


def compute(data):
    """No rows for "Which memory when": the study's settings are its own, not the frontier's."""
    return []


def render(data, rows, ctx):
    caps = capacities(data["summary"], data.get("seeds"))
    pts = points(caps)
    seeds = sorted({r["seeds"] for r in data["summary"]}, key=int)
    return ["## The KV cache at a byte budget", "",
            "Every cache policy and the compressed caches (KIVI, MLA) beside the best recurrent memories, untrained, at "
            "equal bytes of state (every float a policy keeps counts: scores, positions, a window of queries, codes, "
            "scales and zero points, latents), on mqar and associative, recent, overwrite "
            "and salient recall (`scripts/studies/kv/kv.ini`, `reports/kv/`; %s scored seeds). Capacity: n* "
            "[95%% interval] at 90%% accuracy." % "/".join(seeds), "",
            resolved_line([r for per in caps.values() for r in per.values()], "Resolution"), ""] + \
        which_table(pts) + ["", answer(pts), ""]


def readme(data, rows, ctx):
    """reports/kv/README.md's computed parts (its template: README.md.in)."""
    caps = capacities(data["summary"], data.get("seeds"))
    pts = points(caps)
    return {"capacity_tables": "\n".join(capacity_tables(caps)), "which_table": "\n".join(which_table(pts)),
            "compressed_table": "\n".join(compressed_table(caps)),
            "answer": answer(pts),
            "resolution": resolved_line([r for per in caps.values() for r in per.values()], "Resolution")}


def section(reports_dir):
    """The section's lines ([] when the study's summary is not there)."""
    return run(sys.modules[__name__], Context(reports_dir))
