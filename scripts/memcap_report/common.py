"""What every section shares: reading memcap's CSVs, the canonical spec strings, the one
standard error (the summary's accuracy_se_frac), the capacity rule, colours and figure style."""
import csv
import functools
import json
import math
import os
from collections import OrderedDict

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

THRESHOLD = 0.9
# Colours are handed out from this fixed cycle to memories (backend names) in the
# order they first appear in the CSVs, so a backend added to memcap needs no edit here.
CYCLE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
         "#bcbd22", "#17becf"]
ORDER = []    # backend names, in order of first appearance (see learn_memories)
COLOURS = {}  # backend name -> colour, one per memory, kept across every figure


class ReportError(Exception):
    """Input the report cannot be built from (a missing file or column, a spec without a key):
    the command prints it as one line and exits with status 2."""


def reset_memories():
    """Forgets the memories seen so far (one report, one palette)."""
    del ORDER[:]
    COLOURS.clear()


def learn_memories(rows):
    """Adds the backends of `rows` (CSV rows with a memory_spec) not seen yet to ORDER,
    each with the next colour of CYCLE."""
    for r in rows:
        name = base(r["memory_spec"])
        if name not in COLOURS:
            ORDER.append(name)
            COLOURS[name] = CYCLE[(len(ORDER) - 1) % len(CYCLE)]


# ------------------------------------------------------------------ files

def read_csv(path, required=()):
    """The rows of a CSV as dicts; ReportError when it is missing or lacks a required column."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            names = reader.fieldnames or []
    except OSError as e:
        raise ReportError("%s: cannot read (%s)" % (path, e.strerror or e)) from None
    missing = [c for c in required if c not in names]
    if missing:
        raise ReportError("%s: no column '%s'%s" % (
            path, missing[0], " (a summary from an older `memcap aggregate`: aggregate it again)"
            if missing[0] in ("accuracy_se_frac", "state_bits") else ""))
    return rows


# The summary columns the sections read (memcap aggregate writes them all).
SUMMARY_COLUMNS = ("memory_spec", "task_spec", "readout", "budget_floats", "state_floats", "d", "n", "slot",
                   "seeds", "errors", "queries", "accuracy_mean_frac", "accuracy_se_frac",
                   "accuracy_ci95_lo_frac", "accuracy_ci95_hi_frac", "tuned")


def read_summary(path):
    """A summary CSV written by `memcap aggregate`."""
    return read_csv(path, SUMMARY_COLUMNS)


def optional_csv(path, required=()):
    """read_csv, or [] when the file is not there (an optional study)."""
    return read_csv(path, required) if os.path.exists(path) else []


def read_json(path):
    """A JSON file's value; ReportError (one line) when it cannot be read or is not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise ReportError("%s: cannot read (%s)" % (path, e.strerror or e)) from None
    except ValueError as e:
        raise ReportError("%s: not JSON (%s)" % (path, e)) from None


def read_manifest(path):
    """A sweep's manifest (NAME.csv.manifest.json) as a dict: {} when the file is not there (its
    readers then say that they could not state what it records); ReportError when it cannot be read
    or is not a JSON object — the one way the report reads a manifest."""
    if not os.path.exists(path):
        return {}
    manifest = read_json(path)
    if not isinstance(manifest, dict):
        raise ReportError("%s: not a manifest (a JSON object)" % path)
    return manifest


def measured(rows):
    """The summary rows that hold a measurement (an error row has no mean accuracy, a row of a
    task without n no n)."""
    return [r for r in rows if r["accuracy_mean_frac"] != "" and r["n"] != ""]


def fnum(x):
    return float(x) if x not in ("", None) else float("nan")


def se(row):
    """The standard error of a summary row's mean accuracy: `memcap aggregate`'s accuracy_se_frac
    (the seeds' sd, at least one seed's binomial sd, over the square root of the seeds that ran)."""
    return fnum(row["accuracy_se_frac"])


def save(fig, path):
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


def style(ax, xlabel, ylabel, logx=True):
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)


def lag_panels(grid, path, title):
    """Recall against lag (± 1 SE), a grid of panels: grid = [[(panel title, [(label, colour, curve)])]],
    curve = [(lag, acc, se)]; the 0.9 line drawn. Used by this section and by `memcap report`."""
    nrows, ncols = len(grid), max(len(g) for g in grid)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.9 * nrows), squeeze=False, sharey=True)
    fig.subplots_adjust(hspace=0.45)
    for i, panels in enumerate(grid):
        for j in range(ncols):
            ax = axes[i][j]
            if j >= len(panels):
                ax.axis("off")
                continue
            head, lines = panels[j]
            for text, colour, curve in lines:
                ax.errorbar([c[0] for c in curve], [c[1] for c in curve], yerr=[c[2] for c in curve], fmt="o-",
                            ms=3, capsize=2, color=colour, label=text)
            ax.axhline(THRESHOLD, color="#999999", lw=0.8)
            style(ax, "lag (1 = the newest pair)", "mean accuracy", logx=False)
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(head, fontsize=10)
        handles = OrderedDict()  # one legend per row of panels, right of its last panel
        for ax in axes[i]:
            for h, t in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(t, h)
        if handles:
            axes[i][-1].legend(list(handles.values()), list(handles), fontsize=7, loc="upper left",
                               bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(title, fontsize=10)
    save(fig, path)


# ------------------------------------------------------------------ canonical spec strings

def base(spec):
    """The backend (task) name of a spec string."""
    return spec.split(":")[0]


def spec_params(spec):
    """key=value pairs of a canonical spec string, in order (a new dict each call: the caller's to change)."""
    return OrderedDict(_spec_pairs(spec))


@functools.lru_cache(maxsize=None)
def _spec_pairs(spec):
    """spec_params' pairs, parsed once a spec (a report asks for the same few hundred specs ~10^6 times)."""
    if ":" not in spec:
        return ()
    return tuple(tuple(kv.split("=", 1)) for kv in spec.split(":", 1)[1].split(",") if "=" in kv)


def param(spec, key):
    """One parameter of a canonical spec string. memcap writes every parameter of a task, and
    every parameter of a memory but the optional ones, so nothing here supplies a default:
    a spec without the key is an error naming both."""
    p = spec_params(spec)
    if key not in p:
        raise ReportError("spec '%s' has no '%s' (not a canonical spec string from memcap)" % (spec, key))
    return p[key]


def noise_key(task_spec):
    """The task's query noise as memcap theory labels it: cosine=C, or noise=SIGMA."""
    noise = param(task_spec, "noise")
    if fnum(noise) > 0:
        return "noise=" + noise
    return "cosine=" + param(task_spec, "cosine")


NOISE_KEYS = ("noise", "cosine")


def task_labels(specs):
    """{task spec: label} for the task specs given: the task's name, followed by the parameters
    other than the query noise (noise, cosine) whose values differ between the given specs of
    that task, in spec order — "assoc_recall:passes=2" beside "assoc_recall:passes=1" — so that
    variants of a task are never merged into one series; the bare name when the specs of the task
    agree on every such parameter (one variant, at any number of noise levels). A parameter some
    specs lack (an older memcap) counts as differing, and is left out of the labels that lack it."""
    by = OrderedDict()
    for s in OrderedDict.fromkeys(specs):
        by.setdefault(base(s), []).append(s)
    out = {}
    for task, ss in by.items():
        params = [spec_params(s) for s in ss]
        keys = OrderedDict.fromkeys(k for p in params for k in p if k not in NOISE_KEYS)
        varying = [k for k in keys if len({p.get(k) for p in params}) > 1]
        for s, p in zip(ss, params):
            parts = ["%s=%s" % (k, p[k]) for k in varying if k in p]
            out[s] = task + (":" + ",".join(parts) if parts else "")
    return out


def has_noise(task_spec):
    p = spec_params(task_spec)
    return "noise" in p or "cosine" in p


def noise_words(key, short=False):
    """The noise in words: "noise 0", "query–key cosine 0.72", "query noise σ = 0.1 per entry";
    short: "no noise", "cosine 0.72" (the learned-keys tables)."""
    if short:
        return "no noise" if key == "cosine=1" else "cosine " + key.split("=")[1]
    kind, value = key.split("=")
    if kind == "cosine":
        return "noise 0" if float(value) == 1 else "query–key cosine %s" % value
    return "query noise σ = %s per entry" % value


def noise_order(keys):
    """Noise-free first, then by falling cosine / rising sigma."""
    def rank(k):
        kind, value = k.split("=")
        return (0, 0.0) if k == "cosine=1" else ((1, -float(value)) if kind == "cosine" else (2, float(value)))
    return sorted(set(keys), key=rank)


def tuned_keys(tuned):
    """The keys of a `tuned` column: "d=64,beta=8" (or, from an older memcap, "d,beta") -> ["d", "beta"]."""
    return [k.split("=", 1)[0] for k in tuned.split(",") if k]


def tuned_values(tuned):
    """The values of a `tuned` column: "d=64,beta=8,slope=0" -> {"d": "64", "beta": "8", "slope": "0"} (an older
    memcap's "d,beta" names no values: {}). A value that binds as left out (softmax's slope=0) is in the
    `tuned` column but not in the memory spec."""
    return dict(k.split("=", 1) for k in tuned.split(",") if "=" in k)


def memory_name(row):
    """A row's memory name: its `memory` column, or (a CSV from an older memcap) its spec's name."""
    return row.get("memory") or base(row["memory_spec"])


def frontier_spec(mem, tuned):
    """The memory as the sweep named it: keys chosen on tuning seeds read `best`."""
    keys = [k for k in tuned_keys(tuned) if k != "d"]
    p = spec_params(mem)
    for k in keys:
        p[k] = "best"
    return base(mem) + ((":" + ",".join("%s=%s" % kv for kv in p.items())) if p else "")


def is_frontier(r):
    return r.get("tuned", "") != ""


# ------------------------------------------------------------------ words and numbers

def fmt_cap(cap, top, bottom):
    if cap is None:
        return "<%d" % bottom
    return ("≥%d" % cap) if cap >= top else str(cap)


def ratio_words(a, b):
    """How many times a is b, in words: 'x4', 'x1.5'."""
    r = a / b
    return ("×%d" % round(r)) if abs(r - round(r)) < 0.05 else ("×%.1f" % r)


def span_words(xs):
    return str(min(xs)) if min(xs) == max(xs) else "%d–%d" % (min(xs), max(xs))


def list_words(items):
    """'a', 'a and b', 'a, b and c'."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def seeds_text(summary):
    s = sorted({int(r["seeds"]) for r in summary if r.get("seeds")})
    return "–".join(str(x) for x in (s[:1] + s[-1:] if len(s) > 1 else s)) or "?"


# ------------------------------------------------------------------ capacity

def capacity(points, axis="n"):
    """The capacity along an axis of (x, mean accuracy) points — the one rule every table,
    figure and sentence of the reports uses (docs/PROTOCOL.md). Along n (stored pairs): the
    largest n with mean accuracy >= THRESHOLD (a smaller n may miss; the tables name where).
    Along a lag or a copy length L (lag recall, copying), whose curves are not monotone (lag
    recall's rises again at the longest lags; copying's sits flat near 0.9), scanning x upward:
    the last x before the first miss, as the essays read them."""
    if axis == "n":
        return max((x for x, acc in points if acc >= THRESHOLD), default=None)
    return first_miss(points)


def first_miss(points):
    """Scanning x upward, the last x before the first mean accuracy below THRESHOLD; None when the
    first misses. capacity's rule along a lag or a copy length; along n where a study states it so
    (learned keys: the two agree on every committed point, where accuracy falls with n)."""
    best = None
    for x, acc in sorted(points):
        if acc < THRESHOLD:
            break
        best = x
    return best


def fit_exponent(budgets, caps, top):
    """Least-squares slope of log capacity against log budget, over budgets whose capacity
    is known (not below the smallest n tried, not at the largest)."""
    pts = [(b, c) for b, c in zip(budgets, caps) if c is not None and c < top]
    if len(pts) < 2 or len({b for b, _ in pts}) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


# ------------------------------------------------------------------ the information limit

def log2_factorial(n):
    """log2 n! for n >= 0 (lgamma, as memories/theory/information.cpp computes it)."""
    return math.lgamma(n + 1.0) / math.log(2.0)


def max_pairs_exact(bits):
    """The most pairs any state of `bits` bits can hold and recall every one of: the largest n with
    log2 n! <= bits (memories/theory/information.hpp's max_pairs_exact: each read is scored against
    the n stored values, so the state must tell the n! assignments of values to keys apart). 0 when
    bits < 0. Under query noise the same n is still a bound (noise only makes reads harder), but a
    loose one."""
    if not bits >= 0:
        return 0
    lo, hi = 1, 2  # log2 1! = 0 <= bits; hi doubles until log2 hi! > bits, then bisection
    while log2_factorial(hi) <= bits:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        if log2_factorial(mid) <= bits:
            lo = mid
        else:
            hi = mid
    return lo


def state_bits_of(row):
    """A summary row's state in bits: its state_bits (the state at its precision), or, in a summary
    from before storage precision (no state_bits column, or the cell left it empty), 32 x state_floats
    (every memory was fp32 then). None when neither is there."""
    if row.get("state_bits") not in ("", None):
        return int(row["state_bits"])
    if row.get("state_floats") not in ("", None):
        return 32 * int(row["state_floats"])
    return None


# The per-seed columns the reproduction's figures read.
CELL_FIGURE_COLUMNS = ("memory_spec", "task_spec", "n", "slot", "accuracy_frac", "target_dist_mean", "status")


# ------------------------------------------------------------------ the catalog: names from memcap's tables

# `memcap list --json` (scripts/reports.sh writes it to REPORTS_DIR/catalog.json): every memory's
# names (published, the tables', the sentences'), the backend that is the same memory, the special
# case it reduces to, whether it is a cache; every task's capacity axis and slots; the budget's unit.
CATALOG = {"memories": OrderedDict(), "tasks": OrderedDict(), "budget": {}}


def read_catalog(reports_dir, required=True):
    """Loads REPORTS_DIR/catalog.json into CATALOG. ReportError when it cannot be read, is not the
    catalog, or (required) is not there; without it (not required) the catalog loaded before stays."""
    path = os.path.join(reports_dir, "catalog.json")
    if not os.path.exists(path):
        if required:
            raise ReportError("%s: not there (`memcap list --json > %s` writes it; scripts/reports.sh does)" %
                              (path, path))
        return
    cat = read_json(path)
    if not isinstance(cat, dict) or not isinstance(cat.get("memories"), list) or not isinstance(cat.get("tasks"), list):
        raise ReportError("%s: not memcap's catalog (memcap list --json)" % path)
    CATALOG["memories"] = OrderedDict((m["name"], m) for m in cat["memories"])
    CATALOG["tasks"] = OrderedDict((t["name"], t) for t in cat["tasks"])
    CATALOG["budget"] = cat.get("budget", {})


def _catalog(kind):
    if not CATALOG[kind]:
        raise ReportError("no catalog of memcap's memories and tasks read (catalog.json: memcap list --json)")
    return CATALOG[kind]


def memory_info(memory):
    """The catalog's entry of a backend ({} for one it does not list: a plugin's, an older memcap's)."""
    return _catalog("memories").get(memory, {})


def task_info(task):
    """The catalog's entry of a task ({} for one it does not list)."""
    return _catalog("tasks").get(task, {})


def caches():
    """The backends that are caches (they keep the written pairs), in the catalog's order."""
    return tuple(m for m, e in _catalog("memories").items() if e.get("cache"))


def networks(layers=1):
    """The backends that are networks trained as they write (test-time training), of at least
    `layers` layers at their defaults (2: more than a matrix), in the catalog's order."""
    return tuple(m for m, e in _catalog("memories").items() if e.get("network_layers", 0) >= layers)


def label(memory):
    """A memory's name in the tables: the catalog's table name, else its published name followed by
    the backend that is the same memory ("DeltaNet (`delta` = `deltanet`)"), else the backend's name
    in backticks."""
    e = memory_info(memory)
    if e.get("table_name"):
        return e["table_name"]
    if e.get("published"):
        return e["published"] + (" (`%s` = `%s`)" % (memory, e["same_as"]) if e.get("same_as") else "")
    return "`%s`" % memory


def plain_name(memory):
    """A memory's name in the essays' words ("delta rule", "HRR"), else its backend name."""
    return memory_info(memory).get("plain_name") or memory


def the(memory):
    """plain_name in a sentence: "the delta rule", "HRR"."""
    return ("the " if memory_info(memory).get("article") else "") + plain_name(memory)


def name_order(memories):
    """The memories with a name in the tables (label) in the catalog's order (the cache first), then
    the others by name."""
    named = [m for m, e in _catalog("memories").items() if e.get("table_name") or e.get("published")]
    return sorted(set(memories), key=lambda m: (named.index(m) if m in named else len(named), m))


def catalog_order(memories):
    """The memories in the catalog's order (memcap list's), any it does not list after them by name."""
    known = list(_catalog("memories"))
    return sorted(set(memories), key=lambda m: (known.index(m) if m in known else len(known), m))


def reduces_to():
    """{memory: the memory it becomes in its special case} (GLA at alpha = 1 is the linear grid), in the
    catalog's order."""
    return OrderedDict((m, e["reduces_to"]) for m, e in _catalog("memories").items() if e.get("reduces_to"))


# ------------------------------------------------------------------ the sections' protocol

class Context:
    """What a section is handed besides its own data: the reports directory it reads, the directory
    its figures go to, the main job's data (report.Main: the capacity sweep, its capacity rows, the
    theory, the reproduction's cells; None outside REPORT.md) and the capacity table's path."""

    def __init__(self, reports_dir, figures=None, main=None, table=None):
        read_catalog(reports_dir, required=False)  # a reports directory's own catalog, when it has one
        self.reports_dir = reports_dir
        self.figures = figures if figures is not None else os.path.join(reports_dir, "figures")
        self.main = main
        self.table = table


def run(section, ctx):
    """A section's Markdown lines: load -> compute (plain rows) -> render; [] when load finds
    nothing to report on (None)."""
    data = section.load(ctx)
    if data is None:
        return []
    return section.render(data, section.compute(data), ctx)
