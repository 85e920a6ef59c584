"""Today's recurrent memories (modern/modern_summary.csv, from scripts/studies/modern/modern.ini): the
frontier's capacity of RetNet, GLA, Gated DeltaNet, KDA, RWKV-7, MesaNet and Based beside the
cache, the linear grid and DeltaNet, each at the width and settings the race chose, by its
published name; which recurrent memory stores the most at each budget and noise, and how far
it is from the cache."""
import os
import sys
from collections import OrderedDict

from memcap_report.capacity import capacity_rows
from memcap_report.common import (Context, caches, run, SUMMARY_COLUMNS, base, fmt_cap, label, list_words, name_order, noise_order, noise_words,
                                  optional_csv, read_manifest)
from memcap_report.race import edge_words, settings
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
