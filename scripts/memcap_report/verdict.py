"""Which memory when: one table from every study's plain rows (each section's compute), REPORT.md's
first. A plain row is a capacity point at the study's best settings: a dict with task (the family:
the task's name, or its variant "assoc_recall:passes=2"), noise (common.noise_key), budget (floats),
memory (the backend), capacity (None: below the smallest n tried), largest_tried and study.

Per task family and noise: at each budget two or more memories were measured at, the memories are
ranked by capacity (a memory several studies measured there counts with its largest). The leader
is the memory ranked first at the most budgets; the runner-up the one ranked first at the most
budgets once the leader is set aside; a tie on that count goes to the larger capacity summed over
the budgets, then to the catalog's order. The margin: the leader's capacity over the runner-up's
at the budgets both were measured at (their range; `≥` when the leader's capacity there was the
largest n tried, a lower bound)."""
from collections import OrderedDict

from .common import base, catalog_order, label, noise_order, noise_words, ratio_words


def points(rows):
    """{(task, noise): {budget: {memory: (capacity or None, largest tried)}}}, the largest capacity
    when several studies measured a memory at one budget; in order of first appearance."""
    out = OrderedDict()
    for r in rows:
        at = out.setdefault((r["task"], r["noise"]), OrderedDict()).setdefault(int(r["budget"]), OrderedDict())
        old = at.get(r["memory"])
        if old is None or (r["capacity"] or 0) > (old[0] or 0):
            at[r["memory"]] = (r["capacity"], r["largest_tried"])
    return out


def leads(by_budget, without=()):
    """{memory: budgets at which it is ranked first (ties: every one of them)} over the budgets with
    two or more memories, `without` set aside."""
    wins = OrderedDict()
    for b, caps in by_budget.items():
        if len(caps) < 2:
            continue
        caps = {m: c for m, c in caps.items() if m not in without}
        if not caps:
            continue
        top = max((c[0] or 0) for c in caps.values())
        for m, c in caps.items():
            if (c[0] or 0) == top:
                wins[m] = wins.get(m, 0) + 1
    return wins


def pick(by_budget, wins):
    """The memory with the most budgets led; ties: the larger capacity summed over the budgets, then
    the catalog's order."""
    if not wins:
        return None
    order = catalog_order(wins)
    total = {m: sum((caps.get(m, (0, 0))[0] or 0) for caps in by_budget.values()) for m in wins}
    return sorted(wins, key=lambda m: (-wins[m], -total[m], order.index(m)))[0]


def margin(by_budget, lead, runner):
    """The leader's capacity over the runner-up's where both were measured: "×2", "×1–×4", "≥×2" (the
    leader's at the largest n tried and the runner-up's not: a lower bound); "—" when the runner-up
    stores nothing there."""
    ratios = OrderedDict()
    for caps in by_budget.values():
        if lead in caps and runner in caps and caps[runner][0] and caps[lead][0]:
            r = caps[lead][0] / caps[runner][0]
            bound = caps[lead][0] >= caps[lead][1] and caps[runner][0] < caps[runner][1]
            ratios[r] = ratios.get(r, False) or bound
    if not ratios:
        return "—"
    words = [("≥" if ratios[r] else "") + ratio_words(r, 1) for r in (min(ratios), max(ratios))]
    return words[0] if min(ratios) == max(ratios) else "%s–%s" % tuple(words)


def table(rows):
    """The section's lines ([] without plain rows)."""
    pts = points(rows)
    if not pts:
        return []
    tasks = list(OrderedDict.fromkeys(t for t, _ in pts))
    lines = ["## Which memory when", "",
             "Per task and noise, over the budgets (floats of state) at which two or more memories were measured at "
             "their best width and settings (the frontier and the studies on it: every study's plain rows): the "
             "memory storing the most pairs at the most budgets (the leader; ties count for each), the one leading "
             "most often once the leader is set aside (the runner-up), and the leader's capacity over the "
             "runner-up's at the budgets both were measured at (`≥`: the leader's is the largest n tried and the "
             "runner-up's not, a lower bound). Computed from the studies' rows (`scripts/memcap_report/verdict.py`); each study's section "
             "below gives its own tables.", "",
             "| task | noise | budgets | leader (budgets led) | runner-up (led without the leader) | margin |",
             "|---|---|---|---|---|---|"]
    for task in tasks:
        for noise in noise_order(n for t, n in pts if t == task):
            by_budget = OrderedDict(sorted(pts[(task, noise)].items()))
            wins = leads(by_budget)
            lead = pick(by_budget, wins)
            if lead is None:
                continue
            rwins = leads(by_budget, without=(lead,))
            runner = pick(by_budget, rwins)
            counted = [b for b, caps in by_budget.items() if len(caps) >= 2]
            budgets = ("%d" % counted[0]) if len(counted) == 1 else "%d–%d" % (counted[0], counted[-1])
            lines.append("| %s | %s | %s (%d) | %s (%d of %d) | %s | %s |" % (
                task, noise_words(noise), budgets, len(counted), label(lead), wins[lead], len(counted),
                "—" if runner is None else "%s (%d)" % (label(runner), rwins[runner]),
                "—" if runner is None else margin(by_budget, lead, runner)))
    return lines + [""] if lines[-1] != "|---|---|---|---|---|---|" else []


def plain_rows(capacity_rows, study, task=None):
    """Plain rows from capacity.capacity_rows rows (their task label, or `task` for all of them)."""
    return [OrderedDict(study=study, task=task or r["task"], noise=r["noise"], budget=int(r["budget_floats"]),
                        memory=base(r["memory_spec"]), capacity=r["capacity"], largest_tried=r["largest_tried"])
            for r in capacity_rows]
