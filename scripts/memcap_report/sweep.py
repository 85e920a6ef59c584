"""The report of any sweep: capacities, the frontier figure, accuracy against n, theory where a
model applies, and a self-contained HTML page beside a Markdown one.

    memcap report PATH [--out DIR] [--theory CSV [--theory-capacity CSV]]   (the command line)
    /usr/bin/python3 -m memcap_report.sweep PATH [--out DIR] ...   (scripts/ on PYTHONPATH)
    memcap_report.sweep.build(PATH, OUT, theory_files=None)        (from Python)

PATH is a summary CSV (`memcap aggregate`), a results CSV (`memcap run` / `memcap sweep`;
aggregated here with the memcap binary), or a directory holding either (a sweep's --out):
every CSV in it with the summary's or the results' columns is read; a results CSV whose
summary (NAME_summary.csv) is there too is read through the summary. Whatever memories the
CSVs hold — built-in, plugin or Python backends — are reported; nothing names a memory.

Writes into OUT (default: PATH's directory, then report/), each file complete or not at all:
  capacity.csv      per memory (as the sweep named it: keys chosen on tuning seeds read
                    `best`), task, noise, readout and budget: the capacity (the rule of
                    common.capacity, stated in report.md), the largest n tried, the width and
                    the settings chosen there (`tuned`), capacity per float, bits per stored
                    pair (the state's bits at the capacity n, state_bits — 32 x state_floats
                    in a summary without it — over the capacity; along n only)
  figures/*.png     frontier_<task>.png: capacity against budget per memory, one panel per
                    noise (dashed: `memcap theory`'s capacity lines for the models that apply,
                    n* where the model at its best setting crosses 90%, continuous in n;
                    for assoc_recall, black: the log2(n!) limit, the most pairs any state of
                    32 x B bits holds, common.max_pairs_exact — under query noise still a
                    bound, a loose one);
                    accuracy_<task>_<noise>.png: mean accuracy (± 1 SE) against n, one panel
                    per budget (dotted: the model's accuracy where it applies exactly)
  report.md         the tables and the figures (linked)
  report.html       the same, self-contained: figures embedded (base64 PNG), tables sortable
                    by a click on a column's header (a few lines of inline JS)
Theory needs the memcap binary (MEMCAP_BINARY, set by `memcap report`; else `memcap` on PATH);
without it the figures have no theory lines and the page says so. --theory CSV (and
--theory-capacity CSV) read what `memcap theory SUMMARY --out CSV --capacity CSV` already wrote
for PATH's one summary, instead of running it again (scripts/reports.sh does: it runs theory
itself just before).
Exit status: 0 written; 2 bad input (one line on stderr naming it; nothing written).
"""
import base64
import csv
import html
import os
import shutil
import subprocess
import sys
import tempfile
from collections import OrderedDict

from .capacity import at_largest_window, lag_curve
from .common import (CATALOG, CYCLE, read_catalog, task_info, SUMMARY_COLUMNS, THRESHOLD, ReportError, base, capacity, fnum, frontier_spec, has_noise,
                     lag_panels, max_pairs_exact, memory_name, noise_key, noise_order, plt, read_csv, save, se,
                     spec_params, state_bits_of, style, task_labels, tuned_keys,
                     tuned_values)
from .theory import CAPACITY_COLUMNS

RESULT_COLUMNS = ("memory_spec", "task_spec", "readout", "budget_floats", "d", "n", "seed", "accuracy_frac", "status",
                  "tuned")
TABLE_COLUMNS = ["memory", "memory_spec", "task", "noise", "readout", "budget_floats", "capacity_at_0.9",
                 "largest_tried", "d_at_capacity", "tuned_at_capacity", "capacity_per_float", "bits_per_pair"]
RULE = ("Capacity is the largest n (stored pairs) with mean accuracy over seeds ≥ %g; a smaller n may miss. "
        "Along a lag or a copy length (lag recall, copying), the last one before the first miss." % THRESHOLD)
# Tasks whose slots name parts of the task read on their own too: {task: {slot: part}}.
def slot_parts(task):
    """{slot: part} of a task whose slots name parts read on their own too (the catalog's slot_parts)."""
    return task_info(task).get("slot_parts") or {}


# ------------------------------------------------------------------ input

def memcap_binary():
    """The memcap binary: MEMCAP_BINARY, else `memcap` on PATH, else None."""
    path = os.environ.get("MEMCAP_BINARY") or shutil.which("memcap")
    return path if path and os.access(path, os.X_OK) else None


def load_catalog(path, binary, tmp):
    """The catalog of memcap's memories and tasks (common.CATALOG: each task's capacity axis and slots):
    `memcap list --json` from the binary, else a catalog.json beside PATH or in the directory above it
    (a reports directory's, written by scripts/reports.sh), else the one already read."""
    if binary:
        p = subprocess.run([binary, "list", "--json"], capture_output=True, text=True)
        if p.returncode == 0:
            with open(os.path.join(tmp, "catalog.json"), "w") as f:
                f.write(p.stdout)
            read_catalog(tmp)
            return
    here = os.path.abspath(path if os.path.isdir(path) else (os.path.dirname(path) or "."))
    for d in (here, os.path.dirname(here)):
        if os.path.exists(os.path.join(d, "catalog.json")):
            read_catalog(d)
            return
    if not CATALOG["tasks"]:
        raise ReportError("%s: no catalog of memcap's tasks (catalog.json: `memcap list --json`); run `memcap report`, "
                          "or set MEMCAP_BINARY to the memcap binary" % path)


def columns_of(path):
    try:
        with open(path, newline="") as f:
            return next(csv.reader(f), [])
    except OSError as e:
        raise ReportError("%s: cannot read (%s)" % (path, e.strerror or e)) from None


def aggregate(results, binary, tmp):
    """The summary of a results CSV, through `memcap aggregate` (the one statistics module)."""
    if not binary:
        raise ReportError("%s: a results CSV needs `memcap aggregate` to summarise it: run `memcap report`, "
                          "or set MEMCAP_BINARY to the memcap binary" % results)
    out = os.path.join(tmp, "summary.%d.csv" % len(os.listdir(tmp)))
    p = subprocess.run([binary, "aggregate", results, "--out", out], capture_output=True, text=True)
    if p.returncode != 0:
        raise ReportError("%s: memcap aggregate failed: %s" % (results, p.stderr.strip().splitlines()[-1:]))
    return out


def summaries(path, binary, tmp):
    """(summary CSV paths to read, the inputs named) for PATH (see the module's docstring)."""
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if n.endswith(".csv"))
        files = [os.path.join(path, n) for n in names]
    elif os.path.exists(path):
        files = [path]
    else:
        raise ReportError("%s: no such file or directory" % path)
    picked, named = [], []
    for f in files:
        cols = columns_of(f)
        if all(c in cols for c in SUMMARY_COLUMNS):
            picked.append(f)
            named.append(f)
        elif all(c in cols for c in RESULT_COLUMNS):
            if os.path.isdir(path) and os.path.exists(f[:-4] + "_summary.csv"):
                continue  # read through its summary
            picked.append(aggregate(f, binary, tmp))
            named.append(f)
        elif not os.path.isdir(path):
            raise ReportError("%s: neither a results CSV (memcap run) nor a summary (memcap aggregate)" % f)
    if not picked:
        raise ReportError("%s: no results or summary CSV of memcap in it" % path)
    return picked, named


def read_rows(paths):
    rows = []
    for p in paths:
        rows += read_csv(p, SUMMARY_COLUMNS)
    return [r for r in rows if r["accuracy_mean_frac"] != "" and r["n"] != ""]


# ------------------------------------------------------------------ capacities

def row_noise(r):
    """The row's noise as the page names it everywhere (its tables' noise column and its figures'
    titles): the task's noise key, cosine=C or noise=SIGMA ("" for a task without noise)."""
    return noise_key(r["task_spec"]) if has_noise(r["task_spec"]) else ""


def sweep_spec(r):
    """The memory as the sweep named it (keys chosen on tuning seeds read `best`; d apart)."""
    return frontier_spec(r["memory_spec"], r["tuned"]) if r["tuned"] else r["memory_spec"]


def chosen(r):
    """The settings chosen on tuning seeds, "d=64,beta=8", from the row (also from an older memcap's
    `tuned`, which named the keys only: their values are in the row's d and memory spec)."""
    params = spec_params(r["memory_spec"])
    params.update(tuned_values(r["tuned"]))
    return ",".join("%s=%s" % (k, r["d"] if k == "d" else params.get(k, "?")) for k in tuned_keys(r["tuned"]))


def width_label(r):
    return "d=best" if "d" in tuned_keys(r["tuned"]) else "d=" + r["d"]


def series_key(r):
    """One curve: the memory as the sweep named it, its width rule, readout."""
    return (memory_name(r), sweep_spec(r), width_label(r), r["readout"])


def points(rows):
    """(x, mean accuracy, row) along the task's axis: slots (lag recall) or n; copying's slots averaged per n."""
    axis = task_info(base(rows[0]["task_spec"])).get("capacity_axis", "n")
    if axis == "lag":
        return [(int(r["slot"]), fnum(r["accuracy_mean_frac"]), r) for r in rows], "lag"
    per = OrderedDict()
    for r in rows:
        per.setdefault(int(r["n"]), []).append(r)
    return [(n, sum(fnum(r["accuracy_mean_frac"]) for r in rs) / len(rs), rs[0]) for n, rs in per.items()], axis


def task_label(rows):
    """{task spec: the task as the tables name it} (common.task_labels: a variant differing in a
    parameter other than the noise is its own task, "assoc_recall:passes=2")."""
    return task_labels(r["task_spec"] for r in rows)


def capacity_table(rows):
    """The capacity rows, one per series, task (its label), noise and budget, in order of first
    appearance; a task with slot parts (slot_parts) has a row per part beside its own ("overwrite_recall (rewritten)":
    the capacity on that slot's rows alone)."""
    labels = task_label(rows)
    groups = OrderedDict()
    for r in rows:
        task = labels[r["task_spec"]]
        key = series_key(r) + (task, row_noise(r), r["budget_floats"])
        groups.setdefault(key, []).append(r)
        part = slot_parts(base(r["task_spec"])).get(r["slot"])
        if part:
            groups.setdefault(series_key(r) + ("%s (%s)" % (task, part), row_noise(r), r["budget_floats"]), []).append(r)
    out = []
    for (name, spec, width, readout, task, noise, budget), rs in groups.items():
        pts, axis = points(rs)
        cap = capacity([(x, a) for x, a, _ in pts], axis)
        at = next((row for x, _, row in pts if x == cap), None)
        bits = state_bits_of(at) if at is not None and axis == "n" else None
        out.append(OrderedDict([
            ("memory", name), ("memory_spec", spec if width == "d=best" else spec + " " + width),
            ("task", task), ("noise", noise), ("readout", readout.split(":")[0]),
            ("budget_floats", budget or "natural"), ("capacity_at_0.9", "" if cap is None else str(cap)),
            ("largest_tried", str(max(x for x, _, _ in pts))),
            ("d_at_capacity", at["d"] if at else ""), ("tuned_at_capacity", chosen(at) if at else ""),
            ("capacity_per_float", "%.6g" % (cap / int(budget)) if cap is not None and budget else ""),
            ("bits_per_pair", "%.6g" % (bits / cap) if bits is not None and cap else ""),
            ("_axis", axis), ("_series", (name, spec, width, readout)), ("_smallest", min(x for x, _, _ in pts))]))
    return out


# ------------------------------------------------------------------ theory

def theory(paths, binary, tmp, theory_files=None):
    """(`memcap theory` predictions, capacity lines) for the summaries, or ([], [], why not).
    theory_files = (predictions CSV, capacity CSV or None): `memcap theory`'s output for the one
    summary, read instead of running it."""
    if theory_files:
        if len(paths) != 1:
            raise ReportError("--theory: the path holds %d summaries; --theory is for one summary" % len(paths))
        predictions, capacity = theory_files
        return read_csv(predictions), (read_csv(capacity, CAPACITY_COLUMNS) if capacity else []), ""
    if not binary:
        return [], [], "no memcap binary (MEMCAP_BINARY) to run `memcap theory`"
    preds, caps = [], []
    for i, p in enumerate(paths):
        out, cap = os.path.join(tmp, "theory.%d.csv" % i), os.path.join(tmp, "theory_capacity.%d.csv" % i)
        r = subprocess.run([binary, "theory", p, "--out", out, "--capacity", cap],
                           capture_output=True, text=True)
        if r.returncode != 0:  # no capacity lines (no model at a budget): the predictions alone
            r = subprocess.run([binary, "theory", p, "--out", out], capture_output=True, text=True)
            cap = None
        if r.returncode != 0:
            raise ReportError("%s: memcap theory failed: %s" % (p, " ".join(r.stderr.strip().splitlines()[-1:])))
        preds += read_csv(out)
        caps += read_csv(cap, CAPACITY_COLUMNS) if cap else []
    return preds, caps, ""


# ------------------------------------------------------------------ figures

def colours(rows):
    """One colour per memory name (in order of first appearance), kept across every figure."""
    names = OrderedDict()
    for r in rows:
        names.setdefault(memory_name(r), CYCLE[len(names) % len(CYCLE)])
    return OrderedDict((series_key(r), names[memory_name(r)]) for r in rows)


def marker(series):
    """Solid circles for a width chosen on tuning seeds, dash-dotted squares for a fixed width."""
    return "o-" if series[2] == "d=best" else "s-."


def label(series):
    name, spec, width, readout = series
    return "%s %s%s" % (spec, width, "" if readout == "native" else " (" + readout.split(":")[0] + ")")


def slug(text):
    return "".join(c if c.isalnum() else "_" for c in text).strip("_")


def limit_tasks():
    """The tasks whose capacity counts stored pairs read against every stored value (the catalog's
    pairs_limit): the log2(n!) limit bounds them, and theory's capacity lines model them written once."""
    return [t for t, e in CATALOG["tasks"].items() if e.get("pairs_limit")]


def written_once(task):
    """A task label of a pairs_limit task written once: "assoc_recall", or "assoc_recall:passes=1" beside
    its variants."""
    return base(task) in limit_tasks() and task in (base(task), base(task) + ":passes=1")


def limit_line(budgets):
    """(floats, pairs) of the log2(n!) limit over a budget axis in floats: at B floats, the most pairs any
    state of 32·B bits can hold and recall every one of (common.max_pairs_exact), a quarter octave apart."""
    lo, hi = min(budgets), max(budgets)
    xs, x = [], float(lo)
    while x < hi:
        xs.append(x)
        x *= 2 ** 0.25
    xs.append(float(hi))
    return xs, [max_pairs_exact(32 * x) for x in xs]


def frontier_figure(task, caps, tcaps, colour, path, limit=False):
    """Capacity against budget per series, one panel per noise; theory's capacity lines dashed; with
    `limit` (associative recall), the log2(n!) limit in black (under query noise still a bound, a loose one)."""
    noises = noise_order([c["noise"] for c in caps]) if all(c["noise"] for c in caps) else [""]
    fig, axes = plt.subplots(1, len(noises), figsize=(5.2 * len(noises), 4.2), squeeze=False)
    for ax, noise in zip(axes[0], noises):
        at = [c for c in caps if c["noise"] == noise and c["budget_floats"] != "natural"]
        # series with the same capacities at every budget are one line, labelled with every name
        # ("a = b = c"): with many memories most grids coincide, and overdrawn lines would hide
        same = OrderedDict()
        for series in OrderedDict((c["_series"], 1) for c in at):
            pts = tuple(sorted((int(c["budget_floats"]), int(c["capacity_at_0.9"])) for c in at
                               if c["_series"] == series and c["capacity_at_0.9"]))
            if pts:
                same.setdefault((pts, marker(series)), []).append(series)
        for (pts, style_), group in same.items():
            text = label(group[0]) if len(group) == 1 else "%s %s" % (" = ".join(g[0] for g in group), group[0][2])
            ax.plot(*zip(*pts), style_, color=colour[group[0]], label=text)
        budgets = {int(c["budget_floats"]) for c in at}
        present = {s[0] for s in colour}  # theory only for the memories the sweep holds
        for model in OrderedDict((t["memory"], 1) for t in tcaps
                                 if (t["noise"] == noise or not noise) and t["memory"] in present):
            pts = sorted((int(t["budget_floats"]), float(t["capacity_nstar"])) for t in tcaps
                         if t["memory"] == model and (t["noise"] == noise or not noise) and t["capacity_nstar"]
                         and budgets and int(t["budget_floats"]) <= max(budgets))
            if pts:
                c = next((colour[s] for s in colour if s[0] == model), "#444444")
                ax.plot(*zip(*pts), "--", color=c, alpha=0.7, label="%s: theory" % model)
        if limit and budgets:
            ax.plot(*limit_line(budgets), "-", color="black", lw=1.2, label="log2(n!) limit")
        style(ax, "budget (floats of state)", "capacity (largest n at ≥ %d%%)" % round(100 * THRESHOLD))
        ax.set_yscale("log", base=2)
        ax.set_title("%s%s" % (task, ", " + noise if noise else ""), fontsize=10)
        if ax.get_legend_handles_labels()[0]:  # below the panel: the lines stay visible
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1)
        else:
            ax.text(0.5, 0.5, "no n reaches %d%%" % round(100 * THRESHOLD), ha="center", transform=ax.transAxes)
    save(fig, path)


def lag_task(task):
    """A task whose slots are lags of a window n (the catalog's slot "lag bucket"): a recall-against-lag figure too."""
    return task_info(task).get("slot") == "lag bucket"


def lag_figure(task, noise, rows, colour, path):
    """Recall against lag (± 1 SE), one panel per budget, one line per series at the largest window (n)
    it was measured at (common.lag_panels draws); False (nothing drawn) when no row has a lag."""
    budgets = list(OrderedDict((r["budget_floats"], 1) for r in rows))
    panels = []
    for b in budgets:
        at = [r for r in rows if r["budget_floats"] == b]
        lines = []
        for series in OrderedDict((series_key(r), 1) for r in at):
            w, cell = at_largest_window([r for r in at if series_key(r) == series])
            if w is not None:
                lines.append(("%s (W=%d)" % (label(series), w), colour[series], lag_curve(cell)))
        panels.append(("B = %s floats" % (b or "natural"), lines))
    if not any(lines for _, lines in panels):
        return False
    lag_panels([panels], path, "%s%s: recall against lag at the largest window (± 1 SE)" %
               (task, ", " + noise if noise else ""))
    return True


def exact_models(preds):
    """`memcap theory`'s accuracy per (memory_spec, task_spec, budget, d, n) where its model applies exactly."""
    return {(t["memory_spec"], t["task_spec"], t["budget_floats"], t["d"], t["n"]): fnum(t["model_accuracy_frac"])
            for t in preds if t["applies"] in ("exact", "equivalent")}


def accuracy_figure(task, noise, rows, preds, colour, path):
    """Mean accuracy (± 1 SE) against n, one panel per budget; the model's accuracy dotted where it applies."""
    budgets = list(OrderedDict((r["budget_floats"], 1) for r in rows))
    fig, axes = plt.subplots(1, len(budgets), figsize=(4.6 * len(budgets), 3.8), squeeze=False, sharey=True)
    for ax, b in zip(axes[0], budgets):
        at = [r for r in rows if r["budget_floats"] == b]
        for series in OrderedDict((series_key(r), 1) for r in at):
            rs = [r for r in at if series_key(r) == series]
            pts, axis = points(rs)
            xs = [x for x, _, _ in pts]
            ys = [a for _, a, _ in pts]
            errs = [se(row) for _, _, row in pts]
            ax.errorbar(xs, ys, yerr=errs, fmt=marker(series), ms=3, capsize=2, color=colour[series], label=label(series))
            model = sorted((int(r["n"]), preds[k]) for r in rs
                           for k in [(r["memory_spec"], r["task_spec"], r["budget_floats"], r["d"], r["n"])] if k in preds)
            if model:
                ax.plot(*zip(*model), ":", color=colour[series], alpha=0.9)
        ax.axhline(THRESHOLD, color="#999999", lw=0.8)
        style(ax, axis, "mean accuracy")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title("B = %s floats" % (b or "natural"), fontsize=10)
    axes[0][0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(0, -0.16), ncol=min(3, len(colour)))
    fig.suptitle("%s%s (dotted: theory where it applies)" % (task, ", " + noise if noise else ""),
                 fontsize=10)
    save(fig, path)


# ------------------------------------------------------------------ pages

SORT_JS = """
document.querySelectorAll("table.sortable th").forEach(function (th, col) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0], up = th.dataset.dir !== "up";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col].textContent, y = b.cells[col].textContent, nx = parseFloat(x), ny = parseFloat(y);
      var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
      return up ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    th.dataset.dir = up ? "up" : "down";
  });
});
var imgs = document.images, loaded = 0;
for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) loaded++;
document.getElementById("page-check").textContent =
  "figures " + imgs.length + ", decoded " + loaded + ", tables " + document.querySelectorAll("table").length;
"""


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows]
    return out


def html_table(header, rows, ident):
    head = "".join("<th>%s</th>" % html.escape(h) for h in header)
    body = "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % html.escape(str(v)) for v in r) for r in rows)
    return '<table class="sortable" id="%s"><thead><tr>%s</tr></thead><tbody>%s</tbody></table>' % (ident, head, body)


def accuracy_rows(rows):
    return [[memory_name(r), r["memory_spec"], base(r["task_spec"]), row_noise(r), r["budget_floats"] or "natural",
             r["d"], r["n"], r["slot"], chosen(r), r["seeds"], r["errors"], "%.4f" % fnum(r["accuracy_mean_frac"]),
             "%.4f" % se(r)] for r in rows]


MAX_LISTED = 400  # summary rows listed in the pages' accuracy table (more: the summary CSV holds them)
ACCURACY_HEADER = ["memory", "memory_spec", "task", "noise", "budget_floats", "d", "n", "slot", "tuned", "seeds",
                   "errors", "accuracy_mean", "accuracy_se"]


def rule_notes(rows, caps):
    """What the rule says beyond RULE for the tasks present ("" for a sweep without slotted tasks or
    task variants): slots averaged per n, overwrite_recall's slot rows, variants as separate rows."""
    notes = []
    slotted = sorted({base(r["task_spec"]) for r in rows if r["slot"] != ""
                      and task_info(base(r["task_spec"])).get("capacity_axis", "n") == "n"})  # RULE's: a lag, L
    if slotted:
        notes.append("The rows of one n whose slots differ (%s) are read on their mean." % ", ".join(slotted))
    parts = [t for t in CATALOG["tasks"] if slot_parts(t)
             and any(" (" in c["task"] and base(c["task"].split(" (")[0]) == t for c in caps)]
    if parts:
        notes.append("%s: the capacity on one slot's rows alone (%s)." % (
            ", ".join("%s (%s)" % (t, " / ".join(slot_parts(t).values())) for t in parts),
            "; ".join("slot %s: %s" % kv for t in parts for kv in slot_parts(t).items())))
    variants = [c["task"] for c in caps if ":" in c["task"]]
    if variants:
        notes.append("Variants of a task that differ in a parameter other than the noise are separate rows, named "
                     "by it (%s)." % variants[0].split(" (")[0])
    if any(c["bits_per_pair"] for c in caps):
        notes.append("bits_per_pair: the state's bits at the capacity n (state_bits; 32 × state_floats in a summary "
                     "without it) over the capacity.")
    if any(base(c["task"]) in limit_tasks() and c["budget_floats"] != "natural" for c in caps):
        notes.append("In the frontier figures of %s the black line is the log2(n!) limit: no state of 32·B bits "
                     "recalls every one of more pairs than the largest n with log2(n!) ≤ 32·B; under query noise it "
                     "is still a bound, a loose one." % ", ".join(limit_tasks()))
    lagged = sorted({base(r["task_spec"]) for r in rows if lag_task(base(r["task_spec"]))})
    if lagged:
        notes.append(", ".join(lagged) + ": capacity is the largest window W; lag_*.png draws recall against lag (slot: the "
                     "largest lag of a bucket) at the largest W each series was measured at.")
    return " ".join(notes)


def write_pages(stage, title, named, caps, rows, figures, theory_note, notes=""):
    shown = [c for c in caps]
    cap_rows = [[c[k] for k in TABLE_COLUMNS] for c in shown]
    sources = ", ".join("`%s`" % os.path.basename(n) for n in named)
    rule = RULE + (" " + notes if notes else "")
    md = ["# memcap report: %s" % title, "",
          "Written by `memcap report` from %s. %s" % (sources, rule), ""]
    if theory_note:
        md += ["Theory: none drawn (%s)." % theory_note, ""]
    md += ["## Capacity", ""] + md_table(TABLE_COLUMNS, cap_rows) + [""]
    md += ["## Figures", ""] + ["![%s](figures/%s)" % (what, name) for name, what in figures] + [""]
    listed = len(rows) <= MAX_LISTED
    too_many = "%d summary rows: too many to list here; they are the summary's" % len(rows)
    md += ["## Mean accuracy", ""] + (md_table(ACCURACY_HEADER, accuracy_rows(rows)) if listed else [too_many + "."]) + [""]
    with open(os.path.join(stage, "report.md"), "w") as f:
        f.write("\n".join(md))

    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>memcap report: %s</title>" % html.escape(title),
             "<style>body{font-family:sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;"
             "font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}th{cursor:pointer;background:#eee}"
             "img{max-width:100%}</style></head><body>",
             "<h1>memcap report: %s</h1>" % html.escape(title),
             "<p>Written by <code>memcap report</code> from %s. %s</p>" % (
                 html.escape(", ".join(os.path.basename(n) for n in named)), html.escape(rule))]
    if theory_note:
        parts.append("<p>Theory: none drawn (%s).</p>" % html.escape(theory_note))
    parts += ["<h2>Capacity</h2>", html_table(TABLE_COLUMNS, cap_rows, "capacity"), "<h2>Figures</h2>"]
    for name, what in figures:
        with open(os.path.join(stage, "figures", name), "rb") as f:
            data = base64.b64encode(f.read()).decode("ascii")
        parts.append('<figure><img alt="%s" src="data:image/png;base64,%s"><figcaption>%s</figcaption></figure>'
                     % (html.escape(what), data, html.escape(what)))
    parts += ["<h2>Mean accuracy</h2>",
              html_table(ACCURACY_HEADER, accuracy_rows(rows), "accuracy") if listed else "<p>%s.</p>" % too_many,
              '<p id="page-check"></p>', "<script>%s</script>" % SORT_JS, "</body></html>"]
    with open(os.path.join(stage, "report.html"), "w") as f:
        f.write("\n".join(parts) + "\n")


def write_capacity_csv(path, caps):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(TABLE_COLUMNS)
        for c in caps:
            w.writerow([c[k] for k in TABLE_COLUMNS])


# ------------------------------------------------------------------ the whole

def load(path, binary, tmp, theory_files=None):
    """The sweep's data: its summary CSVs (paths, and the inputs named), the catalog, the measured rows,
    theory's predictions and capacity lines (read from theory_files, or run), and theory's note."""
    paths, named = summaries(path, binary, tmp)
    load_catalog(path, binary, tmp)
    rows = read_rows(paths)
    if not rows:
        raise ReportError("%s: no summary row with a measured accuracy (every cell failed?)" % path)
    preds, tcaps, note = theory(paths, binary, tmp, theory_files)
    return dict(path=path, named=named, rows=rows, preds=preds, tcaps=tcaps, note=note)


def compute(data):
    """Plain rows: the capacity table (capacity_table), one per series, task, noise and budget."""
    return capacity_table(data["rows"])


def render(data, caps, stage):
    """Writes capacity.csv, figures/*.png, report.md and report.html into `stage`; returns their paths
    relative to it."""
    rows, tcaps = data["rows"], data["tcaps"]
    colour = colours(rows)
    models = exact_models(data["preds"])
    os.makedirs(os.path.join(stage, "figures"))
    figures = []
    labels = task_label(rows)
    for task in OrderedDict((labels[r["task_spec"]], 1) for r in rows):
        tc = [c for c in caps if c["task"] == task]
        if any(c["budget_floats"] != "natural" for c in tc):
            name = "frontier_%s.png" % slug(task)
            # theory's capacity lines model associative recall written once
            frontier_figure(task, tc, [t for t in tcaps if written_once(task)],
                            colour, os.path.join(stage, "figures", name), limit=base(task) in limit_tasks())
            figures.append((name, "%s: capacity against budget" % task))
        for noise in OrderedDict((row_noise(r), 1) for r in rows if labels[r["task_spec"]] == task):
            rs = [r for r in rows if labels[r["task_spec"]] == task and row_noise(r) == noise]
            name = "accuracy_%s%s.png" % (slug(task), "_" + slug(noise) if noise else "")
            accuracy_figure(task, noise, rs, models, colour, os.path.join(stage, "figures", name))
            figures.append((name, "%s%s: mean accuracy against n" % (task, ", " + noise if noise else "")))
            if lag_task(base(rs[0]["task_spec"])):
                name = "lag_%s%s.png" % (slug(task), "_" + slug(noise) if noise else "")
                if lag_figure(task, noise, rs, colour, os.path.join(stage, "figures", name)):
                    figures.append((name, "%s%s: recall against lag at the largest window" %
                                    (task, ", " + noise if noise else "")))
    write_capacity_csv(os.path.join(stage, "capacity.csv"), caps)
    title = os.path.basename(os.path.normpath(data["path"]))
    write_pages(stage, title, data["named"], caps, rows, figures, data["note"], rule_notes(rows, caps))
    return ["capacity.csv", "report.md", "report.html"] + [os.path.join("figures", n) for n, _ in figures]


def build(path, out=None, theory_files=None):
    """Writes OUT/capacity.csv, OUT/figures/*.png, OUT/report.md and OUT/report.html; returns OUT:
    load -> compute -> render (the protocol of every section, scripts/studies/README.md) into a
    staging directory, then each file moved into place.
    theory_files: (predictions CSV, capacity CSV or None) of `memcap theory` on PATH's summary."""
    if out is None:
        out = os.path.join(path if os.path.isdir(path) else (os.path.dirname(path) or "."), "report")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise ReportError("--out '%s': directory '%s' does not exist" % (out, parent))
    if os.path.exists(out) and not os.path.isdir(out):
        raise ReportError("--out '%s' is a file, not a directory" % out)
    tmp = tempfile.mkdtemp(prefix=".memcap-report.", dir=parent)
    try:
        data = load(path, memcap_binary(), tmp, theory_files)
        stage = os.path.join(tmp, "out")
        written = render(data, compute(data), stage)
        os.makedirs(os.path.join(out, "figures"), exist_ok=True)
        for name in written:
            os.replace(os.path.join(stage, name), os.path.join(out, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


USAGE = ("usage: memcap report PATH [--out DIR] [--theory CSV [--theory-capacity CSV]]\n"
         "       (PATH: a sweep directory, a results CSV or a summary CSV)\n")


def main(argv):
    args, opts = [], {"--out": None, "--theory": None, "--theory-capacity": None}
    what = {"--out": "a directory", "--theory": "a CSV of memcap theory's predictions",
            "--theory-capacity": "a CSV of memcap theory's capacity lines"}
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            sys.stdout.write(USAGE + __doc__)
            return 0
        key, eq, value = a.partition("=")
        key = "--out" if key == "-o" else key
        if key in opts and a.startswith("--") or a == "-o":
            if not eq:
                value = next(it, None)
            if not value:
                sys.stderr.write("memcap report: %s needs %s\n" % (key, what[key]))
                return 2
            opts[key] = value
        elif a.startswith("-"):
            sys.stderr.write("memcap report: unknown option '%s' (accepted: --out, --theory, --theory-capacity, "
                             "--help)\n" % a)
            return 2
        else:
            args.append(a)
    out = opts["--out"]
    if opts["--theory-capacity"] and not opts["--theory"]:
        sys.stderr.write("memcap report: --theory-capacity needs --theory (the predictions of the same run)\n")
        return 2
    theory_files = (opts["--theory"], opts["--theory-capacity"]) if opts["--theory"] else None
    if len(args) != 1:
        sys.stderr.write("memcap report: give one sweep directory, results CSV or summary CSV%s\n"
                         % ("" if not args else " (got %d: %s)" % (len(args), " ".join(args))))
        return 2
    try:
        written = build(args[0], out, theory_files)
    except ReportError as e:
        sys.stderr.write("memcap report: %s\n" % e)
        return 2
    sys.stderr.write("memcap report: wrote %s/report.html, report.md, capacity.csv and figures/\n" % written)
    return 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main(sys.argv[1:]))
