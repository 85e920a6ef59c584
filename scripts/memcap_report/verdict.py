"""Which memory when: one table from every study's plain rows (each section's compute), REPORT.md's
first. A plain row is a capacity point at the study's best settings: a dict with task (the family:
the task's name, or its variant "assoc_recall:passes=2"), noise (common.noise_key), budget (floats),
memory (the backend), capacity (the largest power-of-two n passing; None: below the smallest n
tried), largest_tried and study, and along n also nstar (crossing.Estimate at 0.9) and curve
(crossing.Curve, for paired ratios).

Per task family and noise: at each budget two or more memories were measured at, the memories are
ranked by n* (a memory several studies measured there counts with its largest). The memory with
the largest n* leads there, and so does every memory tied with it: the paired bootstrap interval of
the ratio n*_first / n*_it holds 1 (crossing.ratio; without per-seed rows, equal n*). The leader is
the memory leading at the most budgets; the runner-up the one leading at the most budgets once the
leader is set aside; a tie on that count goes to the larger n* summed over the budgets, then to the
catalog's order. The margin: the ratio n*_leader / n*_runner-up with its paired 95% interval at the
budgets both were measured at (the smallest and the largest; `≥`: the leader's n* is beyond the
largest n tried, a lower bound), and at how many of them the interval holds 1 (a tie).

Frames: a plain row may carry `frame`. Rows without it (or with "" or "untrained": every study on
the frontier) make the first table, the untrained frame, exactly as above. Rows whose frame is
"trained" (each memory inside a layer trained on the task: the trained study) make a second table
right under it, "### The trained frame", with the same leader, runner-up and margin computed over
them alone, and one more column: the leader among the rows whose frame is "untrained_d32" (the
same memories untrained, at the trained study's width rather than the frontier's best) at the
budgets the trained table counts, so each frame's leader is read beside the other's at equal width.
A task where no memory of a frame reaches 90% at any budget says so ("none reaches 90%") rather than
being left out, and a task without query noise (mqar) shows "—" for it. "untrained_d32" rows enter
no other table. Without trained rows there is no second table and the
first is unchanged."""
from collections import OrderedDict

import math

from . import crossing
from .common import base, catalog_order, label, noise_order, noise_words


def value(r):
    """A plain row's n* for ranking (+inf beyond the tried range, 0 below it); its capacity where it
    has no n* (a lag)."""
    e = r.get("nstar")
    if e is not None:
        return 0.0 if e.value == -math.inf else e.value
    return float(r["capacity"] or 0)


def known(r):
    """What a plain row shows of n*: its value, the largest n tried for a bound (n* beyond it)."""
    return min(value(r), r["largest_tried"])


def points(rows):
    """{(task, noise): {budget: {memory: plain row}}}, the row showing the largest n* when several
    studies measured a memory at one budget (a bound counts as the largest n tried: a study that tried
    larger n and measured a crossing there wins over one whose n* is beyond its smaller range); in
    order of first appearance."""
    out = OrderedDict()
    for r in rows:
        at = out.setdefault((r["task"], r["noise"]), OrderedDict()).setdefault(int(r["budget"]), OrderedDict())
        old = at.get(r["memory"])
        if old is None or known(r) > known(old) or (known(r) == known(old) and value(r) > value(old)):
            at[r["memory"]] = r
    return out


def ratio_of(a, b):
    """n*_a / n*_b (crossing.Ratio): paired interval where both rows have curves; else the point ratio
    of their values (None when b's is 0)."""
    if a.get("curve") is not None and b.get("curve") is not None:
        return crossing.ratio(a["curve"], b["curve"])
    va, vb = value(a), value(b)
    if not vb or math.isinf(va) or math.isinf(vb):
        return None
    return crossing.Ratio(va / vb, None, None, "≥" if a["capacity"] and a["capacity"] >= a["largest_tried"] else "",
                          False)


def leads(by_budget, without=()):
    """{memory: budgets at which it leads: the largest n*, or tied with it} over the budgets with two
    or more memories, `without` set aside."""
    wins = OrderedDict()
    for b, rows in by_budget.items():
        if len(rows) < 2:
            continue
        rows = {m: r for m, r in rows.items() if m not in without}
        if not rows:
            continue
        order = sorted(rows, key=lambda m: -value(rows[m]))
        first = order[0]
        if value(rows[first]) <= 0:
            continue
        for m in order:
            rt = ratio_of(rows[first], rows[m]) if m != first else None
            if m == first or (value(rows[m]) > 0 and rt is not None and rt.tie()):
                wins[m] = wins.get(m, 0) + 1
    return wins


def pick(by_budget, wins):
    """The memory with the most budgets led; ties: the larger n* summed over the budgets (a bound
    counting as the largest n tried), then the catalog's order."""
    if not wins:
        return None
    order = catalog_order(wins)

    def total(m):
        return sum(min(value(rows[m]), rows[m]["largest_tried"]) for rows in by_budget.values() if m in rows)
    return sorted(wins, key=lambda m: (-wins[m], -total(m), order.index(m)))[0]


def margin(by_budget, lead, runner):
    """The leader's n* over the runner-up's where both were measured (crossing.fmt_ratio): one ratio
    with its interval, or the smallest and the largest; then at how many budgets the interval holds 1;
    "—" when the runner-up stores nothing there."""
    ratios = []
    for rows in by_budget.values():
        if lead in rows and runner in rows and value(rows[runner]) > 0 and value(rows[lead]) > 0:
            rt = ratio_of(rows[lead], rows[runner])
            if rt is not None:
                ratios.append(rt)
    if not ratios:
        return "—"
    measured = [r for r in ratios if not r.bound.startswith("both")]
    text = ""
    if measured:
        lo = min(measured, key=lambda r: r.value)
        hi = max(measured, key=lambda r: r.value)
        text = crossing.fmt_ratio(lo) if lo is hi else "%s – %s" % (crossing.fmt_ratio(lo), crossing.fmt_ratio(hi))
        ties = sum(r.tie() for r in measured)
        if ties:
            text += " (a tie at %d of %d)" % (ties, len(measured))
    beyond = len(ratios) - len(measured)
    if beyond:
        text += "%sboth beyond the n tried at %d budget%s" % ("; " if text else "", beyond, "" if beyond == 1 else "s")
    return text


def frames(rows):
    """(untrained, trained, untrained at the trained study's width): the plain rows by their `frame`
    (none, "" or "untrained": the untrained frame; "trained"; "untrained_d32")."""
    return ([r for r in rows if r.get("frame") in (None, "", "untrained")],
            [r for r in rows if r.get("frame") == "trained"],
            [r for r in rows if r.get("frame") == "untrained_d32"])


def ranked(pts, task, noise):
    """(by_budget, wins, leader, runner-up wins, runner-up, budgets counted) of one task and noise; leader
    None when no memory leads anywhere."""
    by_budget = OrderedDict(sorted(pts[(task, noise)].items()))
    wins = leads(by_budget)
    lead = pick(by_budget, wins)
    if lead is None:
        return by_budget, wins, None, {}, None, []
    rwins = leads(by_budget, without=(lead,))
    runner = pick(by_budget, rwins)
    counted = [b for b, caps in by_budget.items() if len(caps) >= 2]
    return by_budget, wins, lead, rwins, runner, counted


def budget_span(counted):
    return ("%d" % counted[0]) if len(counted) == 1 else "%d–%d" % (counted[0], counted[-1])


def table(rows):
    """The section's lines ([] without plain rows): the untrained frame's table, then the trained frame's
    (trained_table) when trained rows are there."""
    untrained, trained, same_d = frames(rows)
    lines = untrained_table(untrained)
    more = trained_table(trained, same_d)
    if more and not lines:
        lines = ["## Which memory when", ""]
    return lines + more


def untrained_table(rows):
    """The untrained frame's lines ([] without its plain rows)."""
    pts = points(rows)
    if not pts:
        return []
    tasks = list(OrderedDict.fromkeys(t for t, _ in pts))
    lines = ["## Which memory when", "",
             "Per task and noise, over the budgets (floats of state) at which two or more memories were measured at "
             "their best width and settings (the frontier and the studies on it: every study's plain rows): the "
             "memory with the largest n* (where mean accuracy crosses 90%, interpolated in log n) at the most "
             "budgets (the leader; a memory whose ratio to the first has a paired 95% interval holding 1 is tied "
             "with it, and ties count for each), the one leading most often once the leader is set aside (the "
             "runner-up), and the ratio n*_leader / n*_runner-up with its paired bootstrap interval over the "
             "shared seeds, at the budgets both were measured at (the smallest and the largest; `≥`: the leader's "
             "n* is beyond the largest n tried, a lower bound; a tie where the interval holds 1). Computed from the studies' rows (`scripts/memcap_report/verdict.py`); each study's section "
             "below gives its own tables.", "",
             "| task | noise | budgets | leader (budgets led) | runner-up (led without the leader) | margin |",
             "|---|---|---|---|---|---|"]
    for task in tasks:
        for noise in noise_order(n for t, n in pts if t == task):
            by_budget, wins, lead, rwins, runner, counted = ranked(pts, task, noise)
            if lead is None:
                continue
            lines.append("| %s | %s | %s (%d) | %s (%d of %d) | %s | %s |" % (
                task, noise_words(noise), budget_span(counted), len(counted), label(lead), wins[lead], len(counted),
                "—" if runner is None else "%s (%d)" % (label(runner), rwins[runner]),
                "—" if runner is None else margin(by_budget, lead, runner)))
    return lines + [""] if lines[-1] != "|---|---|---|---|---|---|" else []


def any_noise_order(keys):
    """noise_order, a task without query noise ("") first."""
    keys = set(keys)
    return ([""] if "" in keys else []) + noise_order(k for k in keys if k)


def noise_cell(noise):
    return "—" if not noise else noise_words(noise)


def trained_table(rows, same_d=()):
    """The trained frame's lines: "### The trained frame", a sentence, and per task and noise the same
    leader, runner-up and margin over the rows whose frame is "trained", with, beside them, the untrained
    leader at the same width (rows of frame "untrained_d32") over the same budgets ([] without trained
    rows)."""
    pts = points(rows)
    if not pts:
        return []
    base_pts = points(same_d)
    lines = ["### The trained frame", "",
             "The same ranking over the trained frame's rows (each memory inside a layer of projections, a short "
             "convolution and its family's gates, trained on the task: docs/training.md, `reports/trained/`), at "
             "the budgets two or more trained memories were measured at; beside it, the untrained frame's leader "
             "at the same width and budgets (the same memories with their constants raced on tuning seeds, at the "
             "trained study's width, not the frontier's best: so the first table does not count them).", "",
             "| task | noise | budgets | leader (budgets led) | runner-up (led without the leader) | margin | "
             "untrained at the same width: leader (budgets led) |",
             "|---|---|---|---|---|---|---|"]
    for task in list(OrderedDict.fromkeys(t for t, _ in pts)):
        for noise in any_noise_order(n for t, n in pts if t == task):
            by_budget, wins, lead, rwins, runner, counted = ranked(pts, task, noise)
            counted = counted or [b for b, caps in by_budget.items() if len(caps) >= 2]
            if not counted:
                continue
            beside = "—"
            if (task, noise) in base_pts:
                sub = OrderedDict([((task, noise), OrderedDict((b, r) for b, r in base_pts[(task, noise)].items()
                                                               if b in counted))])
                if sub[(task, noise)]:
                    _, uwins, ulead, _, _, ucounted = ranked(sub, task, noise)
                    beside = "%s (%d of %d)" % (label(ulead), uwins[ulead], len(ucounted)) if ulead is not None else \
                        "none reaches 90%"
            if lead is None:  # no trained memory reaches 0.9 at the smallest n tried, at any budget
                lines.append("| %s | %s | %s (%d) | none reaches 90%% | — | — | %s |" % (
                    task, noise_cell(noise), budget_span(counted), len(counted), beside))
                continue
            lines.append("| %s | %s | %s (%d) | %s (%d of %d) | %s | %s | %s |" % (
                task, noise_cell(noise), budget_span(counted), len(counted), label(lead), wins[lead], len(counted),
                "—" if runner is None else "%s (%d)" % (label(runner), rwins[runner]),
                "—" if runner is None else margin(by_budget, lead, runner), beside))
    return lines + [""] if not lines[-1].startswith("|---") else []


def plain_rows(capacity_rows, study, task=None):
    """Plain rows from capacity.capacity_rows rows (their task label, or `task` for all of them)."""
    return [plain_row(r, study, task or r["task"], base(r["memory_spec"])) for r in capacity_rows]


def plain_row(r, study, task, memory, noise=None, budget=None):
    """One plain row from a capacity.capacity_rows row."""
    return OrderedDict(study=study, task=task, noise=r["noise"] if noise is None else noise,
                       budget=int(r["budget_floats"] if budget is None else budget), memory=memory,
                       capacity=r["capacity"], largest_tried=r["largest_tried"],
                       nstar=r["nstar"][0.9] if r.get("nstar") else None, curve=r.get("curve"))
