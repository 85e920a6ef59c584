"""Budgets in bits (bits/bits_summary.csv, from scripts/studies/bits/bits.ini, and the summaries of bits_large.ini,
bits_xl.ini, bits_wider.ini and bits_mid.ini, each a memory at a budget measured again replacing the earlier sweeps' cells
there): associative recall at equal
budgets of state bits, every memory at its best width, settings and storage precision (fp32, bf16, fp16,
int8, int4; integer formats with one fp32 absmax scale per 32 numbers, counted), beside the frontier at
equal floats (capacity_summary.csv: every memory at fp32, 32 bits a float) and the information limit
log2(n!) (common.max_pairs_exact).

  the table     per noise: memories (rows) by budget in bits (columns); each cell the capacity n*
                (where mean accuracy crosses 0.9, interpolated in log n, with a 95% bootstrap interval
                over the study's own scored seeds: memcap_report.crossing), the precision, width and
                settings chosen at the largest n passing (`tuned`), the state's bits there
                (state_bits), bits per stored pair (the state at n* over n*: a cache's state grows
                with n, so its bits per row), n* as a fraction of the limit at the budget, and the
                mean ± SE (accuracy_se_frac) at the largest n passing; the limit as its own row.
  HRR           measured at its natural width d = D in a block of its own per budget and precision
                (D depends on the precision, so its precision is not raced): the table takes the best
                of its blocks at each budget and noise, chosen on the scored seeds (largest n*, then
                the higher mean at the largest n passing) and marked ‡; every block's capacity is in a table of its
                own. Any memory the summary holds under more than one sweep spec is taken so.
  words         the precisions chosen at the capacity points; the order of the memories by n* at each
                budget in bits against the float frontier at the same budget in floats (bits / 32), two
                memories level where the paired 95% interval of their ratio holds 1; what pricing
                precision multiplies each memory's n* by (a paired interval: the same seeds are the same
                episodes); how near the limit each
                comes; the choices at an end of their candidates (β at the largest or smallest candidate,
                the narrowest or widest width a block races, int4 the lowest precision: the candidates
                bound the choice);
                where a smaller n misses below the capacity.
  figure        figures/bits_frontier.png: capacity against state bits, log-log, one line per memory
                (HRR at its best precision), one panel per noise, the limit drawn in both.

  intervals     each study's own per-seed rows: the bits sweeps' CSVs (bits/*.csv) for the bits cells,
                the main job's capacity.csv and frontier_large/frontier_large.csv for the float
                frontier's, never the report's global index (crossing.SEEDS merges a cell two sweeps
                both ran, and a bits cell at fp32 can be a main-job cell).

Every number and sentence is a function of the CSVs (and the sweep's manifest, for the candidates)."""
import os
import sys
from collections import OrderedDict
from decimal import Decimal, ROUND_HALF_UP

from matplotlib.lines import Line2D

from memcap_report import crossing
from memcap_report.capacity import capacity_rows, resolved_line
from memcap_report.common import (COLOURS, Context, caches, catalog_order, plain_name, run, the, SUMMARY_COLUMNS, ReportError, base, fmt_cap, fnum, learn_memories, list_words,
                                  max_pairs_exact, measured, noise_key, noise_order, noise_words, optional_csv, plt, ratio_words, read_manifest,
                                  save, se,
                                  spec_params, state_bits_of, style)
from memcap_report.race import at_end, listed, narrowest_width

BITS_COLUMNS = SUMMARY_COLUMNS + ("state_bits",)
# memcap's formats in its order of preference on a tie (memories/precision.hpp), and bits per number.
PRECISIONS = ("fp32", "bf16", "fp16", "int8", "int4")
PRECISION_BITS = {"fp32": 32, "bf16": 16, "fp16": 16, "int8": 8, "int4": 4}
narrowest = narrowest_width  # the narrowest width d = best raced, as the manifest states it
SETTING_NAMES = {"beta": "β", "rho": "ρ"}
LIMIT = "log2(n!) limit"


def name(memory):
    """The memory's name in the essays' words (the catalog's plain name: "delta rule", "HRR")."""
    return plain_name(memory)


def memory_order(memories):
    """The catalog's order (memcap list's), then by name."""
    return catalog_order(memories)


# ------------------------------------------------------------------ reading

# The sweeps the section reads, each optional but the first: (summary, manifest) under bits/.
SWEEPS = (("bits_summary.csv", "bits.csv.manifest.json"),                 # scripts/studies/bits/bits.ini
          ("bits_large_summary.csv", "bits_large.csv.manifest.json"),     # scripts/studies/bits/bits_large.ini
          ("bits_xl_summary.csv", "bits_xl.csv.manifest.json"),           # scripts/studies/bits/bits_xl.ini
          ("bits_wider_summary.csv", "bits_wider.csv.manifest.json"),     # scripts/studies/bits/bits_wider.ini
          ("bits_mid_summary.csv", "bits_mid.csv.manifest.json"))         # scripts/studies/bits/bits_mid.ini
# The float frontier at the same budgets in floats: the main job's, and the large budgets' (2^16, 2^20 floats).
FLOAT_SUMMARIES = ("capacity_summary.csv", os.path.join("frontier_large", "frontier_large_summary.csv"))
# Their per-seed CSVs (the intervals of the float frontier's n*).
FLOAT_SEEDS = ("capacity.csv", os.path.join("frontier_large", "frontier_large.csv"))


def per_seed(summary):
    """The per-seed CSV a summary was aggregated from (bits_summary.csv -> bits.csv)."""
    return summary.replace("_summary.csv", ".csv")


def read_seed_index(reports_dir):
    """({cell key: (seeds, accuracies)} of the bits sweeps' per-seed CSVs, the same of the float frontier's):
    each study's own rows, so each n* is bootstrapped over the seeds its summary's means are over. A cell two
    bits sweeps both ran is the later sweep's (read's order: a later sweep supersedes), never a merge."""
    bits = {}
    for summary, _ in SWEEPS:
        bits.update(crossing.read_seeds(os.path.join(reports_dir, "bits", per_seed(summary))))
    floats = {}
    for f in reversed(FLOAT_SEEDS):  # the main job's cells win over the large frontier's (none are shared)
        floats.update(crossing.read_seeds(os.path.join(reports_dir, f)))
    return bits, floats


def read(reports_dir):
    """(bits summary rows, float-frontier rows, the bits sweeps' manifest): the rows of bits/bits_summary.csv
    and, when there, those of bits_large.ini, bits_xl.ini, bits_wider.ini and bits_mid.ini (a memory at a
    budget a later one measures again is its: superseded); the raced (tuned) rows of capacity_summary.csv and
    frontier_large/frontier_large_summary.csv; one manifest whose config holds every sweep's blocks. ([], [], {})
    when bits/bits_summary.csv is not there; the manifest's "sweeps" names the configs read. A bits summary
    without state_bits is a ReportError."""
    rows = measured(optional_csv(os.path.join(reports_dir, "bits", SWEEPS[0][0]), BITS_COLUMNS))
    if not rows:
        return [], [], {}
    manifest = dict(read_manifest(os.path.join(reports_dir, "bits", SWEEPS[0][1])), sweeps=["bits.ini"])
    for summary, man in SWEEPS[1:]:
        more = measured(optional_csv(os.path.join(reports_dir, "bits", summary), BITS_COLUMNS))
        if not more:
            continue
        rows, blocks = superseded(rows, manifest.get("config", {}).get("blocks"), more)
        rows += more
        manifest["sweeps"].append(summary.replace("_summary.csv", ".ini"))
        extra = read_manifest(os.path.join(reports_dir, "bits", man))
        if blocks is not None or extra.get("config", {}).get("blocks"):
            manifest = dict(manifest, config=dict(manifest.get("config", {}), blocks=list(
                blocks or []) + list(extra.get("config", {}).get("blocks") or [])))
    floats = []
    for f in FLOAT_SUMMARIES:
        floats += [r for r in measured(optional_csv(os.path.join(reports_dir, f), SUMMARY_COLUMNS)) if r["tuned"] != ""]
    return rows, floats, manifest


def superseded(rows, blocks, later):
    """(rows, blocks) without what a later sweep's rows replace: a memory at a budget (floats) measured
    again (bits_wider.ini races bits_large.ini's grids at 2^21 bits over wider candidates) replaces the
    earlier rows of that memory at that budget, and drops it from the earlier blocks at that budget (a
    block of several budgets is split per budget), so the width and settings lists are the later race's.
    `blocks` None (no manifest) stays None."""
    again = {(base(r["memory_spec"]), int(r["budget_floats"])) for r in later}
    rows = [r for r in rows if (base(r["memory_spec"]), int(r["budget_floats"])) not in again]
    if blocks is None:
        return rows, None
    out = []
    for b in blocks:
        budgets = [int(f) for f in b.get("budgets_floats", [])]
        if not budgets:  # a block for every budget: kept as it is
            out.append(b)
            continue
        for f in budgets:
            ms = [m for m in b.get("memories", []) if (base(m), f) not in again]
            if ms:
                out.append(dict(b, memories=ms, budgets_floats=[f]))
    return rows, out


def chosen(row, key):
    """A setting of the row at a capacity: from its `tuned` column (which names every raced key, fp32
    too), else its memory spec; precision absent from both is fp32 (memcap leaves it out of the spec)."""
    for kv in row["tuned"].split(","):
        if kv.startswith(key + "="):
            return kv.split("=", 1)[1]
    v = spec_params(row["memory_spec"]).get(key)
    return "fp32" if v is None and key == "precision" else v


def width_candidates(manifest):
    """{(memory, budget bits): (narrowest, widest) of the widths its blocks at that budget race, widest None
    for d = best (powers of two from narrowest(manifest) up to what the budget holds: a bound of the budget, not of the
    candidates); False where its blocks fix the width (d = best:D, one width: HRR's natural d = D)}, the
    budget None for a block that names no budgets (it stands for every budget: width_span); None without the
    manifest's config (then a width is taken as raced, from the narrowest up, when `tuned` names d)."""
    blocks = manifest.get("config", {}).get("blocks")
    if not blocks:
        return None
    out = OrderedDict()
    for b in blocks:
        d = str(b.get("d", ""))
        ws = None
        if d.startswith("best:"):
            try:
                ws = sorted(int(x) for x in d[len("best:"):].split(","))
            except ValueError:  # a form this reader does not know: taken as d = best
                ws = None
        if d == "best" or (d.startswith("best:") and ws is None):
            span = (narrowest(manifest), None)
        elif ws and len(ws) > 1:
            span = (ws[0], ws[-1])
        else:
            span = False
        budgets = [32 * int(f) for f in b.get("budgets_floats", [])] or [None]
        for m in b.get("memories", []):
            for key in ((base(m), bb) for bb in budgets):
                old = out.get(key, False)
                if not old or not span:
                    out[key] = old or span
                else:  # several blocks of one memory at a budget: the widest span
                    out[key] = (min(old[0], span[0]), None if old[1] is None or span[1] is None else max(old[1], span[1]))
    return out


def listed_candidates(manifest, memory, budget_bits):
    """{key: [values]} a sweep's blocks list for the memory at the budget (`beta=best:0.005/0.01`; a block naming
    no budgets stands for every one), the lists of several blocks merged in order; {} where none lists."""
    out = OrderedDict()
    for b in manifest.get("config", {}).get("blocks") or []:
        budgets = [32 * int(f) for f in b.get("budgets_floats", [])]
        if budgets and budget_bits not in budgets:
            continue
        for m in b.get("memories", []):
            if base(m) != memory:
                continue
            for k in spec_params(m):
                for v in listed(m, k) or []:
                    if v not in out.setdefault(k, []):
                        out[k].append(v)
    return out


def width_span(widths, memory, budget_bits):
    """The span width_candidates gives the memory at the budget (a block naming no budgets: at every one)."""
    return widths.get((memory, budget_bits), widths.get((memory, None), False))


def raced_words(widths):
    """'the softmax cache 4–256; the linear grid from 4 up to what the budget holds', one span per memory, or
    each span with its budgets where they differ ('4–256 at 8192–524288 bits, 4–64 at 2097152 bits')."""
    by = OrderedDict()
    for (m, b), span in widths.items():
        if span:
            by.setdefault(m, OrderedDict()).setdefault(span, []).append(b)
    def words(span):
        return "%d–%d" % span if span[1] else "from %d up to what the budget holds" % span[0]

    out = []
    for m in memory_order(by):
        spans = by[m]
        if len(spans) == 1:
            out.append("%s %s" % (the(m), words(next(iter(spans)))))
            continue
        parts = []
        for span, bs in spans.items():
            bs = sorted(b for b in bs if b is not None)
            at = "" if not bs else " at %d bits" % bs[0] if len(bs) == 1 else " at %d–%d bits" % (bs[0], bs[-1])
            parts.append(words(span) + at)
        out.append("%s %s" % (the(m), ", ".join(parts)))
    return out


# ------------------------------------------------------------------ capacities

def cell(r, budget_bits):
    """The numbers of one capacity row (capacity.capacity_rows) at a budget in bits: n* at 0.9 and its
    interval (`est`, a crossing.Estimate; `nstar` the number: the largest n tried for a lower bound, None
    below the smallest), and, at `capacity` — the largest n passing, below the crossing — the row whose
    choice (precision, width, settings), state bits and mean ± SE the cell shows."""
    at = r["at_capacity"]
    est = r["nstar"][0.9] if r.get("nstar") else None
    nstar = est.as_n() if est is not None else r["capacity"]
    out = OrderedDict(memory=base(r["memory_spec"]), spec=r["memory_spec"], noise=r["noise"], bits=budget_bits,
                      capacity=r["capacity"], nstar=nstar, est=est, curve=r.get("curve"), crow=r,
                      largest=r["largest_tried"], smallest=r["smallest_tried"],
                      at_top=(est.value == float("inf")) if est is not None else
                      (r["capacity"] is not None and r["capacity"] >= r["largest_tried"]), row=at,
                      miss=r["miss"], beyond=r["beyond"], picked_from=None,
                      raced=tuple(sorted(k for k in r["tuned_keys"] if k not in ("d", "precision"))))
    limit = max_pairs_exact(budget_bits)
    out["limit"] = limit
    if at is None or not nstar:
        return out
    sb = state_bits_of(at)
    if sb is None:
        raise ReportError("%s at %d bits, n = %s: no state_bits" % (at["memory_spec"], budget_bits, at["n"]))
    # a cache's state grows with n (a row a pair): its bits per pair are its bits per row, at n* as at the
    # largest n passing; any other state is fixed, so its bits are spread over the n* pairs it holds
    per_pair = sb / r["capacity"] if out["memory"] in caches() else sb / nstar
    out.update(precision=chosen(at, "precision"), d=int(at["d"]), state_bits=sb, bits_per_pair=per_pair,
               fraction=nstar / limit, mean=fnum(at["accuracy_mean_frac"]), se=se(at),
               settings=[(k, chosen(at, k)) for k in r["tuned_keys"] if k not in ("d", "precision")])
    return out


def rank_key(c):
    """Best first: the larger n*, then the higher mean at the largest n passing, then memcap's order of
    precisions."""
    prec = c.get("precision", "fp32")
    return (-(c["nstar"] or 0), -(c.get("mean") or 0.0), PRECISIONS.index(prec) if prec in PRECISIONS else 99)


def capacities(rows, bits_per_float=32, seeds=None):
    """({(memory, noise, budget bits): cell}, {(memory, noise, budget bits): [cells of its blocks]}):
    associative recall; a memory measured under several sweep specs (HRR: a block per precision) is
    the best of them there (rank_key, on the scored seeds) and keeps the others in the second dict.
    `seeds`: the per-seed index the intervals are bootstrapped over (read_seed_index's; None: no
    intervals — never the report's global index, which merges other sweeps' seeds of shared cells)."""
    crows, _ = capacity_rows(rows, "frontier", {} if seeds is None else seeds)
    every = OrderedDict()
    for r in crows:
        if r["task"] != "assoc_recall":
            continue
        c = cell(r, bits_per_float * int(r["budget_floats"]))
        every.setdefault((c["memory"], c["noise"], c["bits"]), []).append(c)
    best = OrderedDict()
    for k, cs in every.items():
        cs.sort(key=rank_key)
        best[k] = cs[0]
        if len(cs) > 1:
            best[k] = OrderedDict(cs[0], picked_from=len(cs))
    return best, OrderedDict((k, cs) for k, cs in every.items() if len(cs) > 1)


def points(caps):
    """The (noise, budget bits) points, in the tables' order."""
    return [(n, b) for n in noise_order({n for _, n, _ in caps}) for b in sorted({b for _, nn, b in caps if nn == n})]


def cap_of(c):
    """A cell's n* as a number: the largest n tried for a lower bound, 0 below the smallest."""
    return (c["nstar"] or 0) if c else 0


def cap_text(c, interval=True):
    """A cell's n* as the tables print it: '51 [49, 53]', '≥4096', '<4' (crossing.fmt_est)."""
    if c.get("est") is not None:
        return crossing.fmt_est(c["est"], interval)
    return fmt_cap(c["capacity"], c["largest"], c["smallest"])


def compare(a, b):
    """crossing.Ratio of cell a's n* over b's: a paired bootstrap interval where both have curves with
    per-seed rows (the same seed numbers, task and budget are the same episodes)."""
    if a.get("curve") is not None and b.get("curve") is not None:
        return crossing.ratio(a["curve"], b["curve"])
    va, vb = cap_of(a), cap_of(b)
    return crossing.Ratio(va / vb if vb else (float("inf") if va else 1.0), None, None,
                          "≥" if a["at_top"] else "", False)


def tied(a, b):
    """Whether two cells' n* cannot be told apart: both below the smallest n tried, or the paired 95%
    interval of their ratio holds 1 (crossing.Ratio.tie)."""
    if not cap_of(a) or not cap_of(b):
        return not cap_of(a) and not cap_of(b)
    return compare(a, b).tie()


def comparable(bits, floats):
    """The float frontier's points that raced the same settings as the bits study's there (besides d and the
    precision): a float point at a fixed setting (the large float frontier's delta rule, at its default β) is no
    measure of what pricing precision changes."""
    return OrderedDict((k, c) for k, c in floats.items() if k in bits and bits[k].get("raced") == c.get("raced"))


# ------------------------------------------------------------------ edges

def edges_of(c, manifest, widths):
    """[(what, value, end)] for the choices of a cell at an end of their candidates: a setting at the
    first or last of the manifest's race candidates, the narrowest or widest width its block races
    (width_candidates), int4 (the lowest precision)."""
    if c["capacity"] is None or c.get("row") is None:
        return []
    out = []
    lists = listed_candidates(manifest, c["memory"], c["bits"])
    for k, v in c["settings"]:
        try:
            end = at_end(manifest, c["memory"], k, v, lists.get(k))
        except ValueError:  # a setting whose candidates are not numbers has no ends here
            end = None
        if end:
            out.append((SETTING_NAMES.get(k, k), v, end))
    span = (width_span(widths, c["memory"], c["bits"]) if widths is not None else
            (narrowest(manifest), None) if "d" in [kv.split("=")[0] for kv in c["row"]["tuned"].split(",")] else False)
    if span and c["d"] == span[0]:
        out.append(("d", str(c["d"]), "narrowest"))
    elif span and c["d"] == span[1]:
        out.append(("d", str(c["d"]), "widest"))
    # Precision's ends: the lowest raced (int4, unless a sweep listed fewer), and the highest raced where a
    # sweep's list stops below fp32 (fp32 is the computation's own: never an edge).
    precisions = sorted(lists.get("precision") or PRECISIONS, key=PRECISIONS.index)
    if c["precision"] == precisions[-1]:
        out.append(("precision", c["precision"], "lowest"))
    elif c["precision"] == precisions[0] != PRECISIONS[0]:
        out.append(("precision", c["precision"], "highest"))
    return out


def noise_phrase(noise):
    return "without noise" if noise == "cosine=1" else "under " + noise_words(noise)


def every_point(count):
    return "at its one capacity point" if count == 1 else "at all %d of its capacity points" % count


def edge_words(edges, caps=None):
    """One sentence: the choices at an end of their candidates, per memory ("" when none); "at all N of its
    capacity points" when `caps` shows the choice at every one."""
    if not edges:
        return ""
    by = OrderedDict()
    for (m, what, v, end), where in edges.items():
        by.setdefault(m, []).append((what, v, end, where))
    items = []
    for m in memory_order(by):
        total = sum(1 for (mm, _, _), c in (caps or {}).items() if mm == m and c["capacity"] is not None)
        parts = []
        for what, v, end, where in by[m]:
            count = sum(len(bs) for bs in where.values())
            at = (every_point(count) if caps is not None and count == total else
                  "at " + "; ".join("%s bits %s" % (", ".join(str(b) for b in sorted(bs)), noise_phrase(n))
                                    for n, bs in where.items()))
            parts.append("%s = %s (%s) %s" % (what, v, "the %s width raced" % end if what == "d" else
                                             "the %s %s" % (end, "precision raced" if what == "precision" else "candidate"),
                                             at))
        items.append("%s: %s" % (the(m), "; ".join(parts)))
    return ("† chosen at an end of its candidates — " + "; ".join(items) + ". There the candidates' edge bound "
            "the choice (a β, a width or a format beyond them was not offered), so the "
            "capacity is a lower bound on what a wider set of candidates could give. fp32, the highest precision, is "
            "the computation's own and is not flagged.")


# ------------------------------------------------------------------ the table

def fmt_num(x):
    return ("%d" % round(x)) if abs(x - round(x)) < 0.05 else ("%.1f" % x)


def settings_text(c, flagged):
    """"int4, d=4, β=1024†" for a cell; † on the choices in `flagged` (edges_of)."""
    marks = {(what, v) for what, v, _ in flagged}
    parts = ["%s%s" % (c["precision"], "†" if ("precision", c["precision"]) in marks else ""),
             "d=%d%s" % (c["d"], "†" if ("d", str(c["d"])) in marks else "")]
    parts += ["%s=%s%s" % (SETTING_NAMES.get(k, k), v, "†" if (SETTING_NAMES.get(k, k), v) in marks else "")
              for k, v in c["settings"]]
    return ", ".join(parts)


def cell_text(c, flagged=()):
    """'**270 [256, 290]**‡ (int4, d=4) · 24576 · 96 · 28% · 0.953 ± 0.010 at 256', or '<4'."""
    if c is None:
        return "—"
    if not cap_of(c):
        return "<%d" % c["smallest"]
    top = c["at_top"]  # the largest n tried passes: a bound
    return "**%s**%s (%s) · %d · %s%s · %s%.3g%% · %.3f ± %.3f at %d" % (
        cap_text(c), "‡" if c["picked_from"] else "",
        settings_text(c, flagged), c["state_bits"], "≤" if top else "", fmt_num(c["bits_per_pair"]),
        "≥" if top else "", 100 * c["fraction"], c["mean"], c["se"], c["capacity"])


def tables(caps, manifest):
    """(lines, edges): a table per noise — memories by budget in bits, the limit's row last — and the
    choices at an end of their candidates {(memory, what, value, end): {noise: [budgets]}}."""
    widths = width_candidates(manifest)
    edges = OrderedDict()
    lines = []
    for noise in noise_order({n for _, n, _ in caps}):
        budgets = sorted({b for _, n, b in caps if n == noise})
        lines += ["**%s**" % noise_words(noise), "",
                  "| memory | " + " | ".join("%d bits (%d floats)" % (b, b // 32) for b in budgets) + " |",
                  "|---|" + "---|" * len(budgets)]
        for m in memory_order(m for m, n, _ in caps if n == noise):
            cells = []
            for b in budgets:
                c = caps.get((m, noise, b))
                flagged = edges_of(c, manifest, widths) if c else []
                for what, v, end in flagged:
                    edges.setdefault((m, what, v, end), OrderedDict()).setdefault(noise, []).append(b)
                cells.append(cell_text(c, flagged))
            lines.append("| %s | %s |" % (name(m), " | ".join(cells)))
        lines.append("| *%s* | %s |" % (LIMIT, " | ".join(
            "*%d* · %d · %s · 100%%" % (max_pairs_exact(b), b, fmt_num(b / max_pairs_exact(b))) for b in budgets)))
        lines.append("")
    return lines, edges


def precision_rank(spec):
    p = spec_params(spec).get("precision", "fp32")  # memcap leaves fp32 out of a spec
    return (PRECISIONS.index(p) if p in PRECISIONS else len(PRECISIONS), spec)


def blocks_table(every):
    """The memories measured in several blocks (HRR: one per precision): each block's capacity (and mean ±
    SE there) at each noise and budget, the one the main table takes in bold."""
    if not every:
        return []
    pts = [(n, b) for n in noise_order({n for _, n, _ in every}) for b in sorted({b for _, nn, b in every if nn == n})]
    lines = ["| memory | block | " + " | ".join("%s, %d bits" % (noise_words(n), b) for n, b in pts) + " |",
             "|---|---|" + "---|" * len(pts)]
    for m in memory_order(m for m, _, _ in every):
        specs = OrderedDict()
        for (mm, n, b), cs in every.items():
            if mm == m:
                for c in cs:
                    specs.setdefault(c["spec"], OrderedDict())[(n, b)] = (c, c is cs[0])
        for spec in sorted(specs, key=precision_rank):
            cells = []
            for p in pts:
                c, best = specs[spec].get(p, (None, False))
                if c is None:
                    cells.append("—")
                    continue
                text = cap_text(c) if cap_of(c) else "<%d" % c["smallest"]
                if cap_of(c):
                    text += " (d=%d; %.3f ± %.3f at %d)" % (c["d"], c["mean"], c["se"], c["capacity"])
                cells.append("**%s**" % text if best else text)
            lines.append("| %s | `%s` | %s |" % (name(m), spec, " | ".join(cells)))
    return lines


# ------------------------------------------------------------------ words

def precision_words(caps):
    """Per memory: the precisions chosen at its capacity points, each with where."""
    items = []
    for m in memory_order(m for m, _, _ in caps):
        by = OrderedDict()
        for (mm, n, b), c in caps.items():
            if mm == m and c["capacity"] is not None:
                by.setdefault(c["precision"], OrderedDict()).setdefault(n, []).append(b)
        if not by:
            continue
        order = sorted(by, key=lambda p: PRECISIONS.index(p) if p in PRECISIONS else 99)
        total = sum(len(bs) for w in by.values() for bs in w.values())
        who = the(m) + ("‡" if any(c["picked_from"] for (mm, _, _), c in caps.items() if mm == m) else "")
        if len(by) == 1:
            items.append("%s: %s %s" % (who, order[0], every_point(total)))
        else:
            items.append("%s: %s" % (who, "; ".join("%s at %s" % (p, ", ".join(
                "%s bits %s" % (", ".join(str(b) for b in sorted(bs)), noise_phrase(n)) for n, bs in by[p].items()))
                for p in order)))
    if not items:
        return ""
    return "**Which precision wins.** Chosen at the capacity: " + "; ".join(items) + "."


def order_groups(caps, memories, noise, b):
    """The memories at a point as tie groups, best first: [[(memory, cell), ...], ...]; by n*, a memory
    joining the group of the one before it when their n* are tied (tied: the paired interval of the
    ratio to the group's first holds 1)."""
    at = [(m, caps[(m, noise, b)]) for m in memories if (m, noise, b) in caps]
    groups = []
    for m, c in sorted(at, key=lambda mc: (-cap_of(mc[1]), memory_order(memories).index(mc[0]))):
        if groups and tied(groups[-1][0][1], c):
            groups[-1].append((m, c))
        else:
            groups.append([(m, c)])
    return groups


def brief(c, with_precision):
    if not cap_of(c):
        return "<%d" % c["smallest"]
    s = cap_text(c) + "%s" % ("‡" if c["picked_from"] else "")
    return s + (" (%s, d=%d)" % (c["precision"], c["d"]) if with_precision else " (d=%d)" % c["d"])


def brief_cap(c):
    return cap_text(c, interval=False)


def order_text(groups, with_precision):
    return " > ".join(" ≈ ".join("%s %s" % (name(m), brief(c, with_precision)) for m, c in g) for g in groups)


def times(a, b):
    """a's n* over b's with its paired interval ('×1.95 [1.80, 2.10]'; '≥×2.00 [...]' when a's n* is a
    lower bound)."""
    return crossing.fmt_ratio(compare(a, b))


def relation(a, b):
    """1 when cell a's n* is above b's, 0 tied (tied), -1 below."""
    if tied(a, b):
        return 0
    return (cap_of(a) > cap_of(b)) - (cap_of(a) < cap_of(b))


def changes(bits, floats, memories, noise, b):
    """The pairs of memories whose order (ahead, tied, behind) differs between bits and floats, in words."""
    out = []
    ms = [m for m in memory_order(memories) if (m, noise, b) in bits and (m, noise, b) in floats]
    words = {1: "ahead of", 0: "tied with", -1: "behind"}
    for i, x in enumerate(ms):
        for y in ms[i + 1:]:
            rb = relation(bits[(x, noise, b)], bits[(y, noise, b)])
            rf = relation(floats[(x, noise, b)], floats[(y, noise, b)])
            if rb != rf:
                out.append("%s is %s %s (in floats %s it)" % (the(x), words[rb], the(y), words[rf]))
    return out


def ranking(bits, floats):
    """(bullet lines, {noise: (points, same order, same leader)}): at each noise and budget, the memories'
    order by capacity under bits against the float frontier at the same budget in floats, over the memories
    measured both ways there (a budget with fewer than two is left out)."""
    lines, tally = [], OrderedDict()
    memories = memory_order({m for m, _, _ in bits} & {m for m, _, _ in floats})
    for noise in noise_order({n for _, n, _ in bits}):
        items, same, lead = [], 0, 0
        for b in sorted({bb for _, n, bb in bits if n == noise}):
            # only the memories measured both ways at this budget: an order of fewer is no comparison
            here = [m for m in memories if (m, noise, b) in bits and (m, noise, b) in floats]
            if len(here) < 2:
                continue
            gb, gf = order_groups(bits, here, noise, b), order_groups(floats, here, noise, b)
            if not gb or not gf:
                continue
            if not cap_of(gb[0][0][1]) or not cap_of(gf[0][0][1]):  # no memory reaches 90% at the smallest n
                continue
            ch = changes(bits, floats, memories, noise, b)
            same += not ch
            lb, lf = [m for m, _ in gb[0]], [m for m, _ in gf[0]]
            lead += lb == lf
            top_b, top_f = gb[0][0][1], gf[0][0][1]
            text = ("%d bits (%d floats): in bits %s lead%s with %s%s; in floats (fp32) %s led with %s%s." % (
                b, b // 32, list_words([the(m) for m in lb]), "s" if len(lb) == 1 else "", brief(top_b, True),
                "" if len(gb) < 2 or not cap_of(gb[1][0][1]) or not cap_of(top_b) else
                ", %s the next (%s, %s)" % (times(top_b, gb[1][0][1]), the(gb[1][0][0]), brief(gb[1][0][1], True)),
                list_words([the(m) for m in lf]), brief(top_f, False),
                "" if len(gf) < 2 or not cap_of(gf[1][0][1]) or not cap_of(top_f) else
                ", %s the next (%s, %s)" % (times(top_f, gf[1][0][1]), the(gf[1][0][0]), brief(gf[1][0][1], False))))
            text += (" Order in bits: %s; in floats: %s — %s." % (
                order_text(gb, True), order_text(gf, False), "the same order" if not ch else
                "the order changes: " + "; ".join(ch)))
            items.append(text)
        if items:
            tally[noise] = (len(items), same, lead)
            lines += ["- **%s**, by budget:" % noise_words(noise)] + ["  - " + t for t in items]
    return lines, tally


def ranking_verdict(tally):
    """Whether the order survives pricing precision, per noise, in one sentence."""
    if not tally:
        return ""
    parts = ["%s, the order of the memories by n* (tied where the paired interval of their ratio holds 1) is the "
             "same in bits as in floats at %d of %d budgets, the leader at %d of %d" % ("without noise" if n == "cosine=1" else "under " + noise_words(n),
                                         same, k, lead, k)
             for n, (k, same, lead) in tally.items()]
    parts[0] = parts[0][0].upper() + parts[0][1:]
    return "**Does the ranking survive pricing precision?** " + "; ".join(parts) + "."


def gains(bits, floats):
    """Per noise and memory: n* in bits over n* in floats at the same budget, with its paired interval, at
    each budget; "a tie" where the interval holds 1."""
    out, bounded = [], False
    for noise in noise_order({n for _, n, _ in bits}):
        items = []
        for m in memory_order({mm for mm, n, _ in bits if n == noise}):
            rs = [(b, bits[(m, noise, b)], floats[(m, noise, b)])
                  for b in sorted({bb for mm, n, bb in bits if mm == m and n == noise}) if (m, noise, b) in floats]
            ks = [(b, x, y, compare(x, y)) for b, x, y in rs if cap_of(x) and cap_of(y)]
            if not ks:
                continue
            bounded = bounded or any(x["at_top"] or y["at_top"] for _, x, y, _ in ks)
            items.append("%s %s" % (the(m), ", ".join("%s%s at %d bits (%s → %s)" % (
                "a tie, " if r.tie() else "", crossing.fmt_ratio(r), b, brief_cap(y), brief_cap(x)) for b, x, y, r in ks)))
        if items:
            out.append("%s: %s" % (noise_phrase(noise).capitalize(), "; ".join(items)))
    if not out:
        return ""
    return ("**What pricing precision buys.** n* in bits over n* in the float frontier at the same budget, with "
            "the ratio's paired 95% interval (fp32 floats → bits, where the float frontier raced the same settings; "
            "the race in bits includes fp32, so it falls below the float frontier only where the race's choice reads "
            "lower on the scored seeds; a tie: the interval holds 1): " + ". ".join(out) + "." +
            (" A ratio from an n* at the largest n tried (≥) is a bound." if bounded else ""))


def limit_words(caps):
    """Per noise: the nearest any memory comes to the limit, and its bits per pair against the limit's."""
    parts = []
    for noise in noise_order({n for _, n, _ in caps}):
        cs = [c for (m, n, b), c in caps.items() if n == noise and cap_of(c)]
        if not cs:
            continue
        c = max(cs, key=lambda c: (c["fraction"], -c["bits"]))
        parts.append("%s, %s at %d bits: %s%.3g%% of the limit's %d pairs, %s%s bits a pair against the limit's %s" % (
            noise_phrase(noise), the(c["memory"]), c["bits"], "≥" if c["at_top"] else "", 100 * c["fraction"],
            c["limit"], "≤" if c["at_top"] else "", fmt_num(c["bits_per_pair"]), fmt_num(c["bits"] / c["limit"])))
    if not parts:
        return ""
    return ("**How near the limit.** The largest fraction of the log2(n!) limit any memory's n* reaches: " +
            "; ".join(parts) + ". Under query noise the limit still holds (noise only makes a read harder) but is "
            "loose: it counts assignments, not the noise.")


def miss_words(caps):
    gaps = []
    for (m, n, b), c in caps.items():
        if c["beyond"] is not None:
            x, y = c["miss"], c["beyond"]
            gaps.append("%s, %s, %d bits: n = %s reads %.3f ± %.3f (%s, d = %s), yet n = %s reads %.3f ± %.3f" % (
                the(m), noise_phrase(n), b, x["n"], fnum(x["accuracy_mean_frac"]), se(x), chosen(x, "precision"),
                x["d"], y["n"], fnum(y["accuracy_mean_frac"]), se(y)))
    if not gaps:
        return ""
    return ("**Below the crossing a smaller n misses** in %d place%s (width, settings and precision are chosen per "
            "n on the tuning seeds; n* is read at the last downward crossing): %s." % (len(gaps), "" if len(gaps) == 1 else "s", "; ".join(gaps)))


# ------------------------------------------------------------------ the figure

def figure(bits, floats, path):
    """Capacity against state bits (log-log), one line per memory, a panel per noise (points dodged sideways a
    little); dotted: the same memory in the float frontier (fp32, at 32 bits a float); black: the log2(n!) limit."""
    noises = noise_order({n for _, n, _ in bits})
    fig, axes = plt.subplots(1, len(noises), figsize=(5.8 * len(noises), 4.6), sharey=True, squeeze=False)
    xs_all = [c["state_bits"] for c in bits.values() if c["capacity"]] + [b for _, _, b in bits]
    lo, hi = min(xs_all), max(xs_all)
    grid, x = [], lo / 2
    while x <= hi * 1.5:
        grid.append(x)
        x *= 2 ** 0.25
    for ax, noise in zip(axes[0], noises):
        ax.plot(grid, [max_pairs_exact(g) for g in grid], "-", color="black", lw=1.4, label=LIMIT)
        ms = memory_order(m for m, n, _ in bits if n == noise)
        for i, m in enumerate(ms):
            colour = COLOURS.get(m, "#444444")
            dodge = 2 ** (0.06 * (i - (len(ms) - 1) / 2))  # equal points would hide each other: dodged sideways
            pts = sorted((c["state_bits"], cap_of(c), c["at_top"], bool(c["picked_from"]), c.get("est"))
                         for (mm, n, b), c in bits.items() if mm == m and n == noise and cap_of(c))
            if pts:
                ax.plot([p[0] * dodge for p in pts], [p[1] for p in pts], "o-", color=colour, ms=5,
                        label="%s%s" % (name(m), " (best of its blocks‡)" if any(p[3] for p in pts) else ""))
                for sb, cap, top, _, est in pts:
                    if top:
                        ax.plot([sb * dodge], [cap], "o", color=colour, ms=10, mfc="none")
                    elif est is not None and est.lo is not None and est.finite:
                        lo = est.lo if est.lo > 0 and est.lo != float("-inf") else est.smallest
                        hi = est.hi if est.hi != float("inf") else est.largest
                        ax.plot([sb * dodge] * 2, [lo, hi], "-", color=colour, lw=1.6)
            fp = sorted((c["state_bits"], cap_of(c)) for (mm, n, b), c in floats.items()
                        if mm == m and n == noise and cap_of(c) and (mm, n, b) in bits)
            if fp:
                ax.plot([p[0] * dodge for p in fp], [p[1] for p in fp], "x:", color=colour, lw=1.2, ms=4, alpha=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_title(noise_words(noise) + ("" if noise == "cosine=1" else " (the limit still holds, loosely)"),
                     fontsize=10)
        style(ax, "state (bits) at the largest n passing", "n*: accuracy crosses 90% (95% interval)" if noise == noises[0]
              else "", logx=False)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    handles.append(Line2D([], [], ls=":", marker="x", ms=4, color="#444444"))
    labels.append("dotted: the same memory at fp32 (float frontier)")
    axes[0][0].legend(handles, labels, fontsize=7, loc="upper left")
    fig.suptitle("Budgets in bits: each memory's n* at its best width, settings and precision (bars: 95% interval; "
                 "ringed: the largest n tried; HRR: the best of its precision blocks, chosen on the scored seeds)",
                 fontsize=9)
    save(fig, path)


# ------------------------------------------------------------------ the section

def single(caps, picked):
    """'; at 524288 bits HRR has one block, `hrr` (no pick there)' for the points of a picked memory with one."""
    items = []
    for m in picked:
        where = OrderedDict()
        for (mm, n, b), c in caps.items():
            if mm == m and not c["picked_from"]:
                where.setdefault(c["spec"], OrderedDict())[b] = 1
        items += ["at %s bits %s has one block, `%s`" % (", ".join(str(b) for b in sorted(bs)), name(m), spec)
                  for spec, bs in where.items()]
    return ("; " + "; ".join(items) + " (no pick there)") if items else ""


def load(ctx):
    """read's tuple and read_seed_index's two indexes; None when bits/bits_summary.csv is not there."""
    data = read(ctx.reports_dir)
    return data + read_seed_index(ctx.reports_dir) if data[0] else None


def compute(data):
    """Plain rows: none of its own yet (the tables are computed in render)."""
    return []


def render(data, rows_, ctx):
    """The section's lines; writes figures/bits_frontier.png."""
    rows, float_rows, manifest, seeds, float_seeds = data
    figures = ctx.figures
    learn_memories(rows)
    bits, every = capacities(rows, seeds=seeds)
    if not bits:
        return []
    floats, _ = capacities(float_rows, seeds=float_seeds) if float_rows else (OrderedDict(), None)
    floats = comparable(bits, floats)
    table, edges = tables(bits, manifest)
    figure(bits, floats, os.path.join(figures, "bits_frontier.png"))
    seeds = sorted({r["seeds"] for r in rows}, key=int)
    budgets = sorted({b for _, _, b in bits})
    picked = memory_order(m for (m, _, _), c in bits.items() if c["picked_from"])
    raced = raced_words(width_candidates(manifest) or {})
    tseeds = sorted({b.get("tuning_seeds") for b in manifest.get("config", {}).get("blocks", [])
                     if b.get("tuning_seeds")})
    text = ["## Budgets in bits", "",
            "Associative recall at equal budgets of state **bits** (%s bits = %s floats at 32 bits), every memory at "
            "its best width, settings and storage precision — fp32, bf16, fp16, int8 or int4, the integer formats "
            "with one fp32 absmax scale per 32 numbers, counted in the state — chosen together on %stuning seeds "
            "disjoint from the %s scored seeds (%s, `reports/bits/`)%s. A lower precision "
            "buys more numbers within the same bits; the cache rounds each key and value it writes, the other "
            "memories their whole state after every write. Capacity: n* [95%% interval], where mean accuracy crosses "
            "90%%, interpolated in log n, the interval from a bootstrap over the study's own scored seeds (the float "
            "frontier's over the main job's); the choices are those at the largest n passing." % (
                ", ".join(str(b) for b in budgets), ", ".join(str(b // 32) for b in budgets),
                " or ".join(str(t) for t in tseeds) + " " if tseeds else "",
                seeds[0] if len(seeds) == 1 else "%s (up to %s where the crossing rounds added seeds near 90%%)" % (
                    seeds[0], seeds[-1]),
                list_words(["`scripts/studies/bits/%s`" % ini for ini in manifest.get("sweeps", ["bits.ini"])]),
                "; widths raced: " + "; ".join(raced) if raced else ""), ""]
    if picked:
        text += ["‡ %s is measured at its natural width d = D in a block of its own per budget and precision (D "
                 "depends on the precision, so the precision is not raced): each cell takes the best of its %s "
                 "blocks, **chosen on the scored seeds** (the largest n*, then the higher mean at the largest n "
                 "passing) — not on "
                 "tuning seeds as every other choice here, so that pick is optimistic by the selection%s. Every "
                 "block is in the last table." % (list_words([name(m) for m in picked]), "/".join(sorted(
                     {str(c["picked_from"]) for c in bits.values() if c["picked_from"]})), single(bits, picked)), ""]
    text += ["The limit: recalling every one of n pairs (each read scored against the n stored values) needs a "
             "state of at least log2(n!) bits, so no state of S bits holds more than the largest n with "
             "log2(n!) ≤ S (`memories/theory/information.hpp`). Under query noise the same line is still a bound, "
             "but a loose one: it counts assignments, not the noise.", "",
             "![capacity against state bits](figures/bits_frontier.png)", "",
             "Each cell: **n* [95% interval]** (precision, width and settings chosen at the largest n passing) · "
             "state bits there · bits per stored pair (the state over n*; a cache's state grows a row a pair, so its "
             "bits per row) · n* as a fraction of the log2(n!) limit at the budget · mean accuracy ± SE at the "
             "largest n passing, that n. `≥` marks the largest n tried (the bits per pair are then an upper bound, "
             "the fraction a lower one), `<` the smallest. The limit's row: its pairs · the budget's bits · bits "
             "per pair.", "", resolved_line([c["crow"] for c in bits.values()], "Resolution"), ""]
    text += table
    ew = edge_words(edges, bits)
    text += [ew, ""] if ew else []
    for w in (precision_words(bits),):
        text += [w, ""] if w else []
    if floats:
        lines, tally = ranking(bits, floats)
        verdict = ranking_verdict(tally)
        text += ([verdict, ""] if verdict else []) + (lines + [""] if lines else [])
        g = gains(bits, floats)
        text += [g, ""] if g else []
    for w in (limit_words(bits), miss_words(bits)):
        text += [w, ""] if w else []
    if every:
        text += ["**Each block of %s** (n* [95%% interval]; d, mean ± SE at the largest n passing; bold: the one "
                 "the table takes):" % list_words(
            [name(m) for m in memory_order(m for m, _, _ in every)]), ""] + blocks_table(every) + [""]
    return text


def section(reports_dir, figures):
    """The section's lines ([] when bits/bits_summary.csv is not there); writes figures/bits_frontier.png."""
    return run(sys.modules[__name__], Context(reports_dir, figures))


# ------------------------------------------------------------------ the README

def power(bits):
    """2^k for a power of two, else the number."""
    k = bits.bit_length() - 1
    return "2^%d" % k if bits == 1 << k else str(bits)


def short_num(x):
    """A number of bits per pair as the README prints it: one decimal, none when it is whole."""
    s = "%.1f" % x
    return s[:-2] if s.endswith(".0") else s


def readme_table(bits, floats, budgets, picked):
    """The README's first table: per memory, at each budget without noise, n* [95% interval], the precision
    chosen at the largest n passing and the bits per stored pair, the float frontier's n* in brackets; the
    limit's row last."""
    memories = memory_order(m for m, n, _ in bits if n == "cosine=1")
    lines = ["| memory | %s |" % " | ".join("%s bits" % power(b) for b in budgets), "|---|" + "---|" * len(budgets)]
    for m in memories:
        cells = []
        for i, b in enumerate(budgets):
            c = bits.get((m, "cosine=1", b))
            if c is None or c.get("precision") is None:
                cells.append("–" if c is None else cap_text(c))
                continue
            f = floats.get((m, "cosine=1", b))
            cells.append("%s %s · %.0f%s%s" % (cap_text(c), c["precision"],
                                               c["bits_per_pair"], " b/pair" if len(lines) == 2 and not cells else "",
                                               " (%s)" % cap_text(f) if f else ""))
        lines.append("| %s%s | %s |" % (name(m), "‡" if m in picked else "", " | ".join(cells)))
    lines.append("| *%s* | %s |" % (LIMIT, " | ".join("*%d* · %s" % (max_pairs_exact(b), short_num(b / max_pairs_exact(b)))
                                                      for b in budgets)))
    return "\n".join(lines)


def readme_noise(bits, floats, budgets, picked, noise="cosine=0.72"):
    """The README's sentence of the capacities under noise: per memory at the budgets, the precision when it
    is the same at every one, then the float frontier's."""
    memories = memory_order(m for m, n, _ in bits if n == noise)

    def caps(table, m):
        cs = [table.get((m, noise, b)) for b in budgets]
        return " / ".join(cap_text(c) if c else "–" for c in cs), cs
    items, fl = [], []
    for m in memories:
        text, cs = caps(bits, m)
        precs = {c.get("precision") for c in cs if c}
        same = " (%s at all %d)" % (next(iter(precs)), len(cs)) if len(precs) == 1 and None not in precs and all(cs) else ""
        items.append("%s%s %s%s" % (name(m), "‡" if m in picked else "", text, same))
        ftext, fcs = caps(floats, m)
        if any(fcs):
            fl.append(ftext)
    return "%s; the float frontier's %s" % (", ".join(items), ", ".join(fl))


def at_budgets(caps, budgets):
    """The cells of `caps` at the given budgets in bits."""
    return OrderedDict((k, c) for k, c in caps.items() if k[2] in budgets)


def readme_gains(bits, floats, budgets):
    """Per noise and memory, n* in bits over n* in floats at each budget in order, with the paired interval
    ('a tie' where it holds 1): the README's bullet on what pricing precision buys."""
    out = []
    for noise in noise_order({n for _, n, _ in bits}):
        items = []
        for m in memory_order({mm for mm, n, _ in bits if n == noise}):
            rs = [(b, compare(bits[(m, noise, b)], floats[(m, noise, b)])) for b in budgets
                  if (m, noise, b) in bits and (m, noise, b) in floats
                  and cap_of(bits[(m, noise, b)]) and cap_of(floats[(m, noise, b)])]
            if rs:
                items.append("%s %s" % (the(m), ", ".join("%s%s at %s" % ("a tie " if r.tie() else "", crossing.fmt_ratio(r),
                                                                         power(b)) for b, r in rs)))
        if items:
            out.append("%s: %s" % (noise_phrase(noise), "; ".join(items)))
    return ". ".join(o[0].upper() + o[1:] for o in out)


def readme_leaders(bits, floats, budgets):
    """Per noise, at each budget: the memories leading in bits (tied: the paired interval of their ratio to the
    first holds 1) and their n* over the next one's, then the leaders in floats."""
    out = []
    for noise in noise_order({n for _, n, _ in bits}):
        items = []
        for b in budgets:
            ms = memory_order(m for m, n, bb in bits if n == noise and bb == b)
            gb = order_groups(bits, ms, noise, b)
            fms = [m for m in ms if (m, noise, b) in floats]
            gf = order_groups(floats, fms, noise, b) if len(fms) > 1 else []
            if not gb or not cap_of(gb[0][0][1]):
                continue
            text = "%s bits: %s%s" % (power(b), list_words(["%s %s" % (the(m), cap_text(c)) for m, c in gb[0]]),
                                      "" if len(gb) < 2 or not cap_of(gb[1][0][1]) else
                                      ", %s %s" % (times(gb[0][0][1], gb[1][0][1]), the(gb[1][0][0])))
            if gf and cap_of(gf[0][0][1]):
                text += " (in floats %s)" % list_words([the(m) for m, _ in gf[0]])
            items.append(text)
        if items:
            out.append("%s — %s" % (noise_phrase(noise), "; ".join(items)))
    return ". ".join(o[0].upper() + o[1:] for o in out)


def readme_precisions(bits):
    """How often each precision is chosen at the capacity points (the largest n passing), over all memories,
    per noise: 'fp32 at 0 of 16, int8 at 9, ...'."""
    counts = OrderedDict()
    for (m, n, b), c in bits.items():
        if cap_of(c) and c.get("precision"):
            counts.setdefault(c["precision"], 0)
            counts[c["precision"]] += 1
    total = sum(counts.values())
    order = sorted(counts, key=lambda p: PRECISIONS.index(p) if p in PRECISIONS else 99)
    return "%s of the %d capacity points (fp32 at %d)" % (
        ", ".join("%s at %d" % (p, counts[p]) for p in order), total, counts.get("fp32", 0))


def blocks_against(every, memory, a, b, noise):
    """memory's block at precision a against its block at precision b, per budget (both measured), under one
    noise: '2^19 bits: int8 2206 [2115, 2304] against fp32 660 [640, 688], ×3.34 [3.18, 3.52]'."""
    items = []
    for (m, n, bb), cs in every.items():
        if m != memory or n != noise:
            continue
        ca = next((c for c in cs if c.get("precision") == a or chosen({"tuned": "", "memory_spec": c["spec"]},
                                                                       "precision") == a), None)
        cb = next((c for c in cs if c.get("precision") == b or chosen({"tuned": "", "memory_spec": c["spec"]},
                                                                       "precision") == b), None)
        if ca is None or cb is None or not cap_of(ca) or not cap_of(cb):
            continue
        r = compare(ca, cb)
        items.append((bb, "%s bits: %s %s against %s %s, %s%s" % (power(bb), a, cap_text(ca), b, cap_text(cb),
                                                                  "a tie " if r.tie() else "", crossing.fmt_ratio(r))))
    return "; ".join(t for _, t in sorted(items)) or "—"


def wider_delta(bits, b=2097152):
    """The delta rule's n* against the linear grid's at 2^21 bits, per noise, with the paired interval ("a tie"
    where it holds 1)."""
    out = []
    for noise in noise_order({n for _, n, bb in bits if bb == b}):
        d, g = bits.get(("delta", noise, b)), bits.get(("linear", noise, b))
        if d is None or g is None or not cap_of(d) or not cap_of(g):
            continue
        r = compare(d, g)
        out.append("%s the delta rule's n* over the linear grid's is %s%s (%s against %s)" % (
            noise_phrase(noise), crossing.fmt_ratio(r), ", a tie" if r.tie() else "", cap_text(d), cap_text(g)))
    return "; ".join(out) or "—"


def readme(data, rows_, ctx):
    """reports/bits/README.md's computed parts (its template: README.md.in): the first table (bits.ini's and
    bits_mid.ini's budgets, the float frontier beside) and the capacities under noise at those budgets."""
    rows, float_rows, manifest, seeds, float_seeds = data
    bits, _ = capacities(rows, seeds=seeds)
    floats, _ = capacities(float_rows, seeds=float_seeds) if float_rows else (OrderedDict(), None)
    floats = comparable(bits, floats)
    picked = {m for (m, _, _), c in bits.items() if c["picked_from"]}
    first = read_manifest(os.path.join(ctx.reports_dir, "bits", SWEEPS[0][1]))  # bits.ini: the first table's budgets
    budgets = sorted({int(f) * 32 for b in first.get("config", {}).get("blocks", []) for f in b.get("budgets_floats", [])}
                     & {b for _, _, b in bits})
    if not budgets:  # no bits.ini manifest: every budget in the first table
        budgets = sorted({b for _, _, b in bits})
    large = sorted(b for b in {b for _, _, b in bits} if b > max(budgets))
    _, every = capacities(rows, seeds=seeds)
    return {"table": readme_table(bits, floats, budgets, picked),
            "noise": readme_noise(bits, floats, budgets, picked),
            "resolution": resolved_line([c["crow"] for c in bits.values()], "Resolution"),
            "gains": readme_gains(bits, floats, budgets), "leaders": readme_leaders(bits, floats, budgets),
            "precisions": readme_precisions(at_budgets(bits, budgets)),
            "limit": limit_words(at_budgets(bits, budgets)).replace("**How near the limit.** ", ""),
            "large_leaders": readme_leaders(bits, floats, large) or "—",
            "large_gains": readme_gains(bits, floats, large) or "—",
            "large_limit": limit_words(at_budgets(bits, large)).replace("**How near the limit.** ", "") or "—",
            "hrr_int8_fp32": ". Under noise: ".join(blocks_against(every, "hrr", "int8", "fp32", n)
                                                  for n in ("cosine=1", "cosine=0.72")),
            "wider_delta": wider_delta(bits),
            "hrr_int4_int8": ". Under noise: ".join(blocks_against(every, "hrr", "int4", "int8", n)
                                                  for n in ("cosine=1", "cosine=0.72")),
            "large_table": readme_large(bits, manifest, large), **sweep_tables(ctx.reports_dir, seeds)}


def sweep_tables(reports_dir, seeds=None):
    """The README's tables of single sweeps: bits_xl.ini's and bits_wider.ini's cells by n, bits_mid.ini's HRR
    blocks by precision (n* with intervals over `seeds`, read_seed_index's bits index)."""
    out = {}
    for key, summary in (("xl", "bits_xl_summary.csv"), ("wider", "bits_wider_summary.csv")):
        rows = sweep_rows(reports_dir, summary)
        table, note = per_n_table(rows, seeds) if rows else ("(`bits/%s` is not there)" % summary, "")
        out[key + "_table"] = table + ("\n\n" + note if note else "")
    rows = sweep_rows(reports_dir, "bits_mid_summary.csv")
    out["mid_table"] = blocks_by_precision(rows, seeds) if rows else "(`bits/bits_mid_summary.csv` is not there)"
    return out


def readme_large(bits, manifest, budgets):
    """The README's table of the larger budgets: per memory, at each budget without noise and then under
    noise, n* [95% interval], the choice at the largest n passing (‡ the picked block, † at an end of the
    candidates), the bits per stored pair and mean ± SE at the largest n passing; the limit's row under the
    noise-free columns."""
    widths = width_candidates(manifest)
    noises = noise_order({n for _, n, b in bits if b in budgets})
    cols = [(n, b) for n in noises for b in budgets]
    head = ["%s bits%s" % (power(b), ", " + noise_words(n, short=True).replace("no noise", "noise 0") if i == 0 else "")
            for n in noises for i, b in enumerate(budgets)]
    lines = ["| memory | %s |" % " | ".join(head), "|---|" + "---|" * len(cols)]
    for m in memory_order(m for m, n, b in bits if b in budgets):
        cells = []
        for n, b in cols:
            c = bits.get((m, n, b))
            if c is None:
                cells.append("–")
            elif not cap_of(c):
                cells.append("<%d" % c["smallest"])
            else:
                top = "≤" if c["at_top"] else ""
                cells.append("**%s** (%s) · %s%s%s · %s at %d" % (
                    cap_text(c), settings_text(c, edges_of(c, manifest, widths)),
                    top, fmt_num(c["bits_per_pair"]), " b/pair" if len(lines) == 2 and not cells else "", mean_se(c["row"]),
                    c["capacity"]))
        lines.append("| %s%s | %s |" % (name(m), "‡" if any(bits[k]["picked_from"] for k in bits if k[0] == m) else "",
                                       " | ".join(cells)))
    lines.append("| *%s* | %s |" % (LIMIT, " | ".join(
        ("*%d* · %s" % (max_pairs_exact(b), short_num(b / max_pairs_exact(b)))) if n == "cosine=1" else ""
        for n, b in cols)))
    return "\n".join(lines)


def sweep_rows(reports_dir, summary):
    """One bits sweep's summary rows (bits/NAME_summary.csv), [] when it is not there."""
    return measured(optional_csv(os.path.join(reports_dir, "bits", summary), BITS_COLUMNS))


def choice_text(r, with_precision):
    """The choice a row was read at: its raced settings ("d=2048, β=0.0025"), the precision first when asked."""
    parts = [("precision", chosen(r, "precision"))] if with_precision else []
    parts += [tuple(kv.split("=", 1)) for kv in r["tuned"].split(",") if kv and not kv.startswith("precision=")]
    return ", ".join("%s=%s" % (SETTING_NAMES.get(k, k), v) if k != "precision" else v for k, v in parts)


def half_up(x, places=3):
    """A number as the CSV prints it, rounded half up at `places` decimals (0.9125 -> 0.913: the decimal
    digits, not the binary float, decide)."""
    return str(Decimal(repr(x) if isinstance(x, float) else x).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP))


def mean_se(r):
    """Mean ± SE of a summary row, three decimals."""
    return "%s ± %s" % (half_up(r["accuracy_mean_frac"]), half_up(r["accuracy_se_frac"]))


def per_n_table(rows, seeds=None):
    """(table, note): one sweep's rows by n (rows) and memory and noise (columns), mean ± SE and the choice
    there, in bold at the largest n passing, and a last row of n* [95% interval]; the precision in each cell
    unless every choice is the same (the note)."""
    caps, _ = capacities(rows, seeds=seeds)
    at = OrderedDict()
    for r in rows:
        at[(base(r["memory_spec"]), noise_key(r["task_spec"]), int(r["n"]))] = r
    cols = [(m, n) for n in noise_order({n for _, n, _ in at}) for m in memory_order(m for m, nn, _ in at if nn == n)]
    precs = {chosen(r, "precision") for r in at.values()}
    one = len(precs) == 1
    lines = ["| n | %s |" % " | ".join("%s, %s" % (name(m), noise_words(n, short=True).replace("no noise", "noise 0"))
                                        for m, n in cols), "|---|" + "---|" * len(cols)]
    for n_ in sorted({n for _, _, n in at}):
        cells = []
        for m, noise in cols:
            r = at.get((m, noise, n_))
            if r is None:
                cells.append("—")
                continue
            c = next((c for (mm, nn, _), c in caps.items() if mm == m and nn == noise), None)
            bold = "**" if c is not None and c["capacity"] == n_ else ""
            choice = choice_text(r, not one)
            cells.append("%s%s%s%s" % (bold, mean_se(r), bold, " (%s)" % choice if choice else ""))
        lines.append("| %d | %s |" % (n_, " | ".join(cells)))
    stars = []
    for m, noise in cols:
        c = next((c for (mm, nn, _), c in caps.items() if mm == m and nn == noise), None)
        stars.append("—" if c is None else "**%s**" % cap_text(c))
    lines.append("| n* | %s |" % " | ".join(stars))
    return "\n".join(lines), ("(every choice %s)" % next(iter(precs))) if one else ""


def blocks_by_precision(rows, seeds=None):
    """One sweep's blocks of a memory per precision (HRR at its natural width): per precision, D and, per
    noise, n* [95% interval] with mean ± SE at the largest n passing, and at the next n tried; the best
    block (rank_key) in bold."""
    _, every = capacities(rows, seeds=seeds)
    noises = noise_order({n for _, n, _ in every})
    by_spec = OrderedDict()
    for r in rows:
        by_spec.setdefault((r["memory_spec"], noise_key(r["task_spec"])), {})[int(r["n"])] = r
    specs = OrderedDict()
    for (m, noise, b), cs in every.items():
        for i, c in enumerate(cs):
            specs.setdefault(c["spec"], {})[noise] = (c, i == 0)
    head = ["precision", "D"] + [w for n in noises for w in ("n*, " + noise_words(n, short=True).replace("no noise", "noise 0"), "next n")]
    lines = ["| %s |" % " | ".join(head), "|---|---:|" + "---|" * (2 * len(noises))]
    for spec in sorted(specs, key=precision_rank):
        cells, d = [], ""
        for noise in noises:
            c, top = specs[spec].get(noise, (None, False))
            if c is None or not cap_of(c):
                cells += ["—", "—"]
                continue
            d = str(c["d"])
            nxt = sorted(n for n in by_spec.get((spec, noise), {}) if n > c["capacity"])
            bold = "**" if top else ""
            cells.append("%s%s%s (%d: %s)" % (bold, cap_text(c), bold, c["capacity"], mean_se(c["row"])))
            cells.append("%d: %s" % (nxt[0], mean_se(by_spec[(spec, noise)][nxt[0]])) if nxt else "—")
        lines.append("| %s | %s | %s |" % (chosen({"tuned": "", "memory_spec": spec}, "precision"), d, " | ".join(cells)))
    return "\n".join(lines)
