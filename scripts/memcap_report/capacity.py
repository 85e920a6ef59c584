"""The capacity table: per frame, memory, task, noise and budget, the capacity along the task's
axis, where it lies and how it grows with the budget (capacity_table.csv; its columns are
listed in the package's docstring)."""
import csv
import math
from collections import OrderedDict, defaultdict

from . import crossing
from .common import (THRESHOLD, base, task_info, capacity, fit_exponent, fmt_cap, fnum, frontier_spec, has_noise,
                     noise_key, se, spec_params, task_labels, tuned_keys)


def capacity_points(task, rs):
    """(points, axis, row at each x): the capacity axis of a task (its name; the catalog's
    capacity_axis) and mean accuracy along it. Along a lag, the slots; along n or L, the rows of one
    n (a task with slots: lag buckets, untouched and rewritten keys, positions) are averaged, as
    `memcap report` does."""
    at = {}
    axis = task_info(task).get("capacity_axis", "n")
    if axis == "lag":
        pts = [(int(r["slot"]), fnum(r["accuracy_mean_frac"])) for r in rs]
        for r in rs:
            at.setdefault(int(r["slot"]), r)
        return pts, "lag", at
    if axis == "L":
        per_n = defaultdict(list)
        for r in rs:
            per_n[int(r["n"])].append(fnum(r["accuracy_mean_frac"]))
            at.setdefault(int(r["n"]), r)
        return [(n, sum(v) / len(v)) for n, v in per_n.items()], "L", at
    per_n = OrderedDict()
    for r in rs:
        per_n.setdefault(int(r["n"]), []).append(fnum(r["accuracy_mean_frac"]))
        at.setdefault(int(r["n"]), r)
    return [(n, sum(v) / len(v)) for n, v in per_n.items()], "n", at


def curve_of(rs, seeds):
    """crossing.Curve of a group's rows along n (each row a reading; a row made of several parts,
    all_parts', the lowest of its parts)."""
    by = OrderedDict()
    for r in rs:
        by.setdefault(int(r["n"]), []).append(r.get("_parts") or [r])
    xs = sorted(by)
    return crossing.Curve(xs, [by[x] for x in xs], crossing.SEEDS if seeds is None else seeds)


def capacity_rows(summary, frame, seeds=None):
    """The capacity table's rows of one frame, and the fitted exponents, keyed
    (frame, memory_spec, task, noise, readout). In the frontier a memory is its spec with
    the tuned keys read `best`, gathering the rows whose chosen width (and beta) differ by n.
    A task is its label (common.task_labels): variants differing in a parameter other than the
    noise (assoc_recall:passes=2 beside passes=1) are separate rows; one variant is its name.
    Along n each row also holds `nstar` ({threshold: crossing.Estimate}: the crossing n* at 0.5, 0.9
    and 0.99, with a bootstrap interval over the seeds of `seeds`, crossing.read_seeds' index of the
    per-seed CSV, by default every one the report loaded, crossing.SEEDS; cells it lacks: n* alone) and `curve` (crossing.Curve, for paired ratios); along a lag
    or L neither (their capacity keeps its rule)."""
    groups = OrderedDict()
    labels = task_labels(r["task_spec"] for r in summary)
    for r in summary:
        mem = frontier_spec(r["memory_spec"], r["tuned"]) if frame == "frontier" else r["memory_spec"]
        key = (mem, labels[r["task_spec"]], noise_key(r["task_spec"]) if has_noise(r["task_spec"]) else "",
               r["readout"].split(":")[0], int(r["budget_floats"]))
        groups.setdefault(key, []).append(r)
    rows, top = [], {}
    for (mem, task, noise, readout, budget), rs in groups.items():
        pts, what, at = capacity_points(base(task), rs)
        cap = capacity(pts, what)
        top[(frame, mem, task, noise, readout)] = max(p[0] for p in pts)
        where = at.get(cap) if cap is not None else None
        # a smaller x that misses below the capacity (widths are chosen per n: the one chosen
        # there may read lower on the scored seeds than the tuning seeds said)
        miss = min((x for x, a in pts if a < THRESHOLD and cap is not None and x < cap), default=None)
        beyond = cap if miss is not None else None
        curve = curve_of(rs, seeds) if what == "n" else None
        rows.append(OrderedDict(group=rs, curve=curve, nstar=crossing.estimates(curve) if curve is not None else None,
                                frame=frame, memory_spec=mem, task=task, noise=noise, readout=readout,
                                budget_floats=budget, axis=what, capacity=cap, largest_tried=max(p[0] for p in pts),
                                smallest_tried=min(p[0] for p in pts),
                                d_at_capacity=int(where["d"]) if where else None,
                                spec_at_capacity=where["memory_spec"] if where else None,
                                tuned_keys=tuned_keys(where["tuned"]) if where else [],
                                at_capacity=where,
                                miss=at[miss] if miss is not None else None,
                                beyond=at[beyond] if beyond is not None else None))
    exps = {}
    for key in top:
        rs = sorted([r for r in rows if (r["frame"], r["memory_spec"], r["task"], r["noise"], r["readout"]) == key],
                    key=lambda r: r["budget_floats"])
        exps[key] = fit_exponent([r["budget_floats"] for r in rs], [nstar_or_capacity(r) for r in rs], top[key])
    return rows, exps


def nstar_or_capacity(r, t=THRESHOLD):
    """The row's n* at t (along n; the largest n tried when it is a lower bound, None below the
    smallest), else its capacity (a lag, L)."""
    return r["nstar"][t].as_n() if r.get("nstar") else r["capacity"]


def exp_of(exps, r):
    return exps.get((r["frame"], r["memory_spec"], r["task"], r["noise"], r["readout"]))



NSTAR_COLUMNS = ["n_star_%s%s" % (t, end) for t in ("0.9", "0.5", "0.99") for end in ("", "_lo", "_hi")]
TABLE_COLUMNS = ["memory_spec", "task", "readout", "budget_floats", "capacity_axis", "capacity_at_0.9",
                 "largest_tried", "capacity_exponent", "frame", "noise", "d_at_capacity",
                 "memory_spec_at_capacity", "capacity_per_float"] + NSTAR_COLUMNS + ["resolved_0.9", "seeds"]


def write_table(path, frontier, essay):
    """capacity_table.csv: the frontier's rows, then the essay frame's; each (rows, exponents)."""
    (frows, fexps), (rows, exps) = frontier, essay
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(TABLE_COLUMNS)
        for r, e in [(r, exp_of(fexps, r)) for r in frows] + [(r, exp_of(exps, r)) for r in rows]:
            cap = r["capacity"]
            w.writerow([r["memory_spec"], r["task"], r["readout"], r["budget_floats"], r["axis"],
                        "" if cap is None else cap, r["largest_tried"], "" if e is None else "%.3f" % e,
                        r["frame"], r["noise"], "" if r["d_at_capacity"] is None else r["d_at_capacity"],
                        r["spec_at_capacity"] or "", "" if cap is None else "%.6g" % (cap / r["budget_floats"])] +
                       nstar_cells(r))


def nstar_cells(r):
    """The n* columns of one row: n* and its interval at 0.9, 0.5 and 0.99 (crossing.csv_n), whether
    the interval at 0.9 is within 5% of n* (1/0), the seeds per n (a range when they differ: a
    refined sweep); empty along a lag or L."""
    if not r.get("nstar"):
        return [""] * (len(NSTAR_COLUMNS) + 2)
    out = []
    for t in (0.9, 0.5, 0.99):
        e = r["nstar"][t]
        out += [crossing.csv_n(e.value), crossing.csv_n(e.lo), crossing.csv_n(e.hi)]
    c = r["curve"]
    counts = sorted({len(set(s for j in ids for s in c.cells[j][0])) for at in c.shape for ids in at}) if c.cells else []
    return out + [int(r["nstar"][0.9].resolved()), ("%d" % counts[0] if len(counts) == 1 else
                                                   "%d-%d" % (counts[0], counts[-1])) if counts else ""]


# ------------------------------------------------------------------ the parts of a task with slots or variants
# (the catalog's slot_parts, a task's `passes`): each read on its own


def part_of(r):
    """The part a summary row belongs to: (task, part) — (task, "") for a task with one reading,
    (task, its slot's part) for a task whose slots name parts (the catalog's slot_parts: overwrite
    keys untouched or rewritten), (task, "passes=P") for a task that takes `passes` (how many times
    the pairs are written), (task, "gate=G") for a task that takes `gate` at a value other than its
    default (salient_recall:gate=all: every memory's writes gated; the default, left out of the
    canonical string, is (task, "")); None for a slot that names no part."""
    task = base(r["task_spec"])
    slots = task_info(task).get("slot_parts") or {}
    if slots:
        part = slots.get(r["slot"])
        return (task, part) if part else None
    if "passes" in (task_info(task).get("params") or {}):
        return (task, "passes=" + passes(r["task_spec"]))
    if "gate" in (task_info(task).get("params") or {}) and "gate" in spec_params(r["task_spec"]):
        return (task, "gate=" + spec_params(r["task_spec"])["gate"])
    return (task, "")


def passes(task_spec):
    """How many times a spec writes its pairs: its `passes`; a spec without the key writes them once
    (memcap leaves passes out of the canonical string then: tasks/assoc_recall.hpp)."""
    return spec_params(task_spec).get("passes", "1")


def part_order(parts, order=()):
    """`order`'s parts first, in its order, then by task and number of passes."""
    known = list(order)
    return sorted(set(parts), key=lambda p: (known.index(p) if p in known else len(known), p[0],
                                            int(p[1].split("=")[1]) if p[1].startswith("passes=") else 0))


def split(summary, order=()):
    """{(task, part): rows}: the summary cut into parts (each one task variant, one slot part), so that
    no two variants are ever read as one; a task with slot parts also read on all of them at once
    (part "both": all_parts); in part_order's order."""
    out = OrderedDict()
    for r in summary:
        p = part_of(r)
        if p:
            out.setdefault(p, []).append(r)
    for task in OrderedDict.fromkeys(t for t, _ in list(out)):
        names = list((task_info(task).get("slot_parts") or {}).values())
        if names:
            both = all_parts([out.get((task, n), []) for n in names])
            if both:
                out[(task, "both")] = both
    return OrderedDict((p, out[p]) for p in part_order(out, order))


def all_parts(parts):
    """A task read on all its slot parts at once (overwrite_recall: rewritten and untouched keys): per
    cell group (memory, settings, task, budget, n), a copy of the last part's row (the catalog's slot
    order: rewritten keys) whose accuracy is the lowest of the parts' — so its capacity is the largest
    n at which every part passes. A memory that keeps only the newest pairs (a small sliding window
    holding just the rewrites) passes on rewritten keys alone, and is not credited for it here. Groups
    with the last part only (rewrite = 1) keep their row."""
    def key(r):
        return (r["memory_spec"], r["tuned"], r["task_spec"], r["readout"], r["budget_floats"], r["n"], r["d"])
    last, others = parts[-1], parts[:-1]
    other = [{key(r): r for r in p} for p in others]
    out = []
    for r in last:
        row = dict(r)
        for o in other:
            u = o.get(key(r))
            if u is not None and fnum(u["accuracy_mean_frac"]) < fnum(row["accuracy_mean_frac"]):
                row["accuracy_mean_frac"] = u["accuracy_mean_frac"]
                row["accuracy_se_frac"] = u["accuracy_se_frac"]
        row["slot"] = ""
        row["_parts"] = [r] + [o[key(r)] for o in other if key(r) in o]
        out.append(row)
    return out


def overwrite_both(rewritten, untouched):
    """all_parts of a task with two slot parts, (untouched, rewritten)."""
    return all_parts([untouched, rewritten])


_PARTS = {}


def part_capacities(summary, order=(), seeds=None):
    """{(task, part): {(memory, noise, budget): capacity row (capacity.capacity_rows, frontier)}}: the
    capacity of every part — a window's lag buckets averaged, each slot part on its own rows, each
    number of passes on its own rows; in part_order's order."""
    key = (id(summary), len(summary), tuple(order), id(seeds))
    if key in _PARTS and _PARTS[key][0] is summary:
        return _PARTS[key][1]
    out = OrderedDict()
    for p, rows in split(summary, order).items():
        caps, _ = capacity_rows(rows, "frontier", seeds)
        out[p] = OrderedDict(((base(r["memory_spec"]), r["noise"], r["budget_floats"]), r) for r in caps)
    _PARTS.clear()  # one summary at a time: a section asks again for the one it just asked for
    _PARTS[key] = (summary, out)
    return out


def part_family(part):
    """The task family a part counts in for "which memory when" (verdict.py): the task, its variant
    when written more than once ("assoc_recall:passes=2") or gated ("salient_recall:gate=all"), a
    task with slot parts on all of them at once ("both"); None for one slot's part alone."""
    task, what = part
    if what in ("", "both", "passes=1"):
        return task
    if what.startswith(("passes=", "gate=")):
        return "%s:%s" % (task, what)
    return None


def part_rows(parts, study):
    """Plain rows (verdict.py) from part_capacities' {part: {(memory, noise, budget): row}}."""
    out = []
    for part, pc in parts.items():
        family = part_family(part)
        if family is None:
            continue
        out += [OrderedDict(study=study, task=family, noise=noise, budget=int(b), memory=m, capacity=r["capacity"],
                            largest_tried=r["largest_tried"], nstar=r["nstar"][THRESHOLD] if r.get("nstar") else None,
                            curve=r.get("curve")) for (m, noise, b), r in pc.items()]
    return out


def cap_text(r, t=THRESHOLD, interval=True):
    """A capacity as the tables print it: along n, n* at t with its 95% interval ('57 [52, 63]';
    crossing.fmt_est); along a lag or L, the old rule: '≥W' at the largest tried (a lower bound),
    '<n' below the smallest."""
    if r.get("nstar"):
        return crossing.fmt_est(r["nstar"][t], interval)
    return fmt_cap(r["capacity"], r["largest_tried"], r["smallest_tried"])


def nstar(r, t=THRESHOLD):
    """A row's n* at t as a number for ranking: +inf above the tried range, 0 below it; along a lag
    or L, its capacity (0 for none)."""
    if r.get("nstar"):
        v = r["nstar"][t].value
        return 0.0 if v == -float("inf") else v
    return r["capacity"] or 0


def compare(a, b, t=THRESHOLD):
    """crossing.Ratio of row a's n* at t over row b's: a paired bootstrap interval where both have curves
    (along n); else the ratio of their capacities, without an interval (a lag, L)."""
    if a.get("curve") is not None and b.get("curve") is not None:
        return crossing.ratio(a["curve"], b["curve"], t)
    va, vb = a["capacity"] or 0, b["capacity"] or 0
    return crossing.Ratio(va / vb if vb else (math.inf if va else 1.0), None, None,
                          "≥" if va and va >= a["largest_tried"] else "", False)


def order(a, b, t=THRESHOLD):
    """1 when row a's n* is above b's (the ratio's interval above 1), -1 below, 0 a tie (it holds 1)."""
    r = compare(a, b, t)
    return 0 if r.tie() else (1 if r.value > 1 else -1)


def resolved_line(rows, what):
    """REPORT.md's count of capacity points along n whose interval at 0.9 has a half-width of at most
    5% of n* (crossing.HALF_WIDTH), out of those with n* inside the tried range and an interval."""
    pts = [r for r in rows if r.get("nstar")]
    if not pts:
        return ""
    bounds = [r for r in pts if not r["nstar"][THRESHOLD].finite]
    inside = [r for r in pts if r["nstar"][THRESHOLD].finite and r["nstar"][THRESHOLD].lo is not None]
    bare = len(pts) - len(bounds) - len(inside)
    ok = [r for r in inside if r["nstar"][THRESHOLD].resolved()]
    return ("%s: %d of %d capacity points (n* at 0.9 inside the tried range, with an interval) have a 95%% interval "
            "whose half-width is at most %d%% of n*%s; %d more are bounds (n* outside the n tried)%s." % (
                what, len(ok), len(inside), round(100 * crossing.HALF_WIDTH),
                "" if not inside else " (%.0f%%)" % (100.0 * len(ok) / len(inside)), len(bounds),
                "" if not bare else "; %d have no interval (no per-seed rows)" % bare))


def lag_curve(rows):
    """[(lag, mean accuracy, SE)] of one cell's rows (one memory, budget, noise, window), by lag:
    recent_recall's slot is the largest lag of its bucket."""
    return sorted((int(r["slot"]), fnum(r["accuracy_mean_frac"]), se(r)) for r in rows
                  if r["slot"] != "" and not math.isnan(fnum(r["accuracy_mean_frac"])))


def horizon(curve):
    """The horizon of a lag curve [(lag, acc, ...)]: scanning lags upward, the last lag before the first
    one below 0.9 (common.capacity along "lag"); None when the first lag misses."""
    return capacity([(c[0], c[1]) for c in curve], "lag")


def at_largest_window(rows):
    """(W, rows at W): the largest window whose rows hold a measured curve; (None, []) when none does."""
    ws = sorted({int(r["n"]) for r in rows if lag_curve([r])})
    if not ws:
        return None, []
    return ws[-1], [r for r in rows if int(r["n"]) == ws[-1]]
