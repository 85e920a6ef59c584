"""The capacity table: per frame, memory, task, noise and budget, the capacity along the task's
axis, where it lies and how it grows with the budget (capacity_table.csv; its columns are
listed in the package's docstring)."""
import csv
from collections import OrderedDict, defaultdict

from .common import (THRESHOLD, base, capacity, fit_exponent, fnum, frontier_spec, has_noise, noise_key, task_labels,
                     tuned_keys)


def capacity_points(task, rs):
    """(points, axis, row at each x): the capacity axis of a task (its name) and mean accuracy along
    it. Along n, the rows of one n (a task with slots: recent_recall's lag buckets,
    overwrite_recall's untouched and rewritten keys) are averaged, as `memcap report` does."""
    at = {}
    if task in ("lag_recall",):
        pts = [(int(r["slot"]), fnum(r["accuracy_mean_frac"])) for r in rs]
        for r in rs:
            at.setdefault(int(r["slot"]), r)
        return pts, "lag", at
    if task in ("copying", "selective_copying"):
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


def capacity_rows(summary, frame):
    """The capacity table's rows of one frame, and the fitted exponents, keyed
    (frame, memory_spec, task, noise, readout). In the frontier a memory is its spec with
    the tuned keys read `best`, gathering the rows whose chosen width (and beta) differ by n.
    A task is its label (common.task_labels): variants differing in a parameter other than the
    noise (assoc_recall:passes=2 beside passes=1) are separate rows; one variant is its name."""
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
        rows.append(OrderedDict(frame=frame, memory_spec=mem, task=task, noise=noise, readout=readout,
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
        exps[key] = fit_exponent([r["budget_floats"] for r in rs], [r["capacity"] for r in rs], top[key])
    return rows, exps


def exp_of(exps, r):
    return exps.get((r["frame"], r["memory_spec"], r["task"], r["noise"], r["readout"]))



TABLE_COLUMNS = ["memory_spec", "task", "readout", "budget_floats", "capacity_axis", "capacity_at_0.9",
                 "largest_tried", "capacity_exponent", "frame", "noise", "d_at_capacity",
                 "memory_spec_at_capacity", "capacity_per_float"]


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
                        r["spec_at_capacity"] or "", "" if cap is None else "%.6g" % (cap / r["budget_floats"])])
