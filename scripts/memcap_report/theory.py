"""`memcap theory`'s tables beside the measurements: which rows a model describes, why a model
misses where it does, the model curves the figures draw and the residual table."""
import math
import os
from collections import OrderedDict, defaultdict

from .common import ORDER, base, fnum, noise_key, noise_order, noise_words, param, read_csv, spec_params


THEORY_COLUMNS = ("memory_spec", "task_spec", "budget_floats", "d", "n", "frame", "noise_sigma", "model", "applies",
                  "note", "model_accuracy_frac", "measured_mean_frac", "measured_se_frac", "residual_points",
                  "residual_se")
CAPACITY_COLUMNS = ("memory", "model", "noise", "budget_floats", "capacity_nstar", "nstar_kind", "d", "beta")


def read_theory(out):
    """theory.csv and theory_capacity.csv when present (scripts/reports.sh writes both)."""
    paths = [os.path.join(out, "theory.csv"), os.path.join(out, "theory_capacity.csv")]
    if not all(os.path.exists(p) for p in paths):
        return [], []
    return read_csv(paths[0], THEORY_COLUMNS), read_csv(paths[1], CAPACITY_COLUMNS)


def not_modelled(t):
    """Why `memcap theory` gives no prediction for a row, in a few words."""
    note = t["note"]
    if note.startswith("evicting"):
        return "the cache evicting (n > B/2d)"
    if note.startswith("d_phi") and "<" in note:
        return "the grid with d_φ < d (a Johnson–Lindenstrauss projection)"
    if note.startswith("trace D"):
        return "HRR with trace D ≠ d (random maps in and out)"
    if note.startswith("phi="):
        return "the grid with non-linear features"
    return note or "not modelled"


def miss_reason(t):
    """Why a model misses a row, from what memories/theory.hpp documents about each model."""
    m, app = t["model"], t["applies"]
    d, n, res = int(t["d"]), int(t["n"]), fnum(t["residual_points"])
    sigma = fnum(t["noise_sigma"])
    if app == "approx":
        return "query noise enters HRR's model only approximately (`memcap theory`: crosstalk (n + 1)/D, target at the cosine)"
    if m == "hrr_recall":
        if n <= 16 and res < 0:
            return "documented: HRR's model reads low at n ≤ 16, finite-D factors shared by all competitors"
        return "finite-D effects the two-Gaussian HRR model leaves out (documented at D = 64: up to +0.3 points)" \
            if d <= 256 else "not among the documented misses"
    if m == "grid_recall":
        if n > d:
            return "documented: competitors are not independent once n ≫ d (≤ 0.25 points at d = 64)"
        return "not among the documented misses (validated at d = 64 and 256)"
    beta = fnum(param(t["memory_spec"], "beta"))
    if sigma * math.sqrt(d) >= 2 and 3 <= beta <= 4:
        return "documented: strong noise with moderate β reads up to ~1.1 points low"
    if d not in (64, 256):
        return "outside the widths the cache model was validated at (d = 64, 256)"
    return "not among the documented misses"


def theory_curve(theory, frame, family, task_spec, budget):
    """n and model accuracy (%) of theory.csv's rows of one memory family, frame, noise and budget
    where the model applies."""
    key = noise_key(task_spec)
    pts = sorted((int(t["n"]), 100 * fnum(t["model_accuracy_frac"])) for t in theory
                 if t["frame"] == frame and base(t["memory_spec"]) == family and t["applies"] != "no"
                 and noise_key(t["task_spec"]) == key and t["budget_floats"] == str(budget))
    return [p[0] for p in pts], [p[1] for p in pts]


def broken(xs, ys):
    """The points with a gap (NaN) wherever x more than doubles: a model line is drawn only
    between neighbouring sizes where it applies."""
    bx, by = [], []
    for i, (x, y) in enumerate(zip(xs, ys)):
        if i and x > 2 * xs[i - 1]:
            bx.append(float("nan"))
            by.append(float("nan"))
        bx.append(x)
        by.append(y)
    return bx, by

def tcaps_model(tcaps, fam):
    return next((c["model"] for c in tcaps if c["memory"] == fam), fam)


def residual_lines(theory):
    """The residual table: model − measured in points where a model applies in the frontier."""
    ts = [t for t in theory if t["frame"] == "frontier" and t["applies"] != "no"]
    if not ts:
        return []
    out = ["### Theory against measurement (frontier)", "",
           "Model − measured accuracy in points, at each row's own width, β and noise (theory.csv). SE: the "
           "standard error of the measured mean over seeds (sd at least one seed's binomial sd). Flagged (**!**): "
           "|residual| > 3 SE, with the reason `memories/theory.hpp` gives for that model's known misses. Rows "
           "where model and measurement are both within 1 point of 0 or of 100% are left out of the table and "
           "counted below it.", "",
           "| memory | noise | B | n | d | model % | measured % ± SE | residual | SE units | why it misses |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    shown = hidden = 0
    hidden_max = 0.0
    applies = defaultdict(int)
    flagged = []
    for t in sorted(ts, key=lambda t: (ORDER.index(base(t["memory_spec"])) if base(t["memory_spec"]) in ORDER else 99,
                                       noise_order([noise_key(x["task_spec"]) for x in ts]).index(noise_key(t["task_spec"])),
                                       int(t["budget_floats"] or 0), int(t["n"]))):
        applies[t["applies"]] += 1
        p, m = fnum(t["model_accuracy_frac"]), fnum(t["measured_mean_frac"])
        z = fnum(t["residual_se"])
        flag = abs(z) > 3
        if flag:
            flagged.append(t)
        trivial = (p >= 0.99 and m >= 0.99) or (p <= 0.01 and m <= 0.01)
        if trivial and not flag:
            hidden += 1
            hidden_max = max(hidden_max, abs(fnum(t["residual_points"])))
            continue
        shown += 1
        beta = spec_params(t["memory_spec"]).get("beta")
        out.append("| %s%s | %s | %s | %s | %s%s | %.1f | %.1f ± %.1f | %+.1f | %+.1f%s | %s |" % (
            base(t["memory_spec"]), "" if t["applies"] == "exact" else " (%s)" % t["applies"],
            noise_words(noise_key(t["task_spec"])), t["budget_floats"], t["n"], t["d"],
            ", β=" + beta if beta else "", 100 * p, 100 * m, 100 * fnum(t["measured_se_frac"]),
            fnum(t["residual_points"]), z, " **!**" if flag else "", miss_reason(t) if flag else ""))
    out.append("")
    nots = OrderedDict()
    for t in theory:
        if t["frame"] == "frontier" and t["applies"] == "no":
            k = not_modelled(t)
            nots[k] = nots.get(k, 0) + 1
    if nots:
        out.append("Frontier rows of these memories the models do not describe (no prediction): %s." %
                   "; ".join("%s (%d rows)" % kv for kv in nots.items()))
        out.append("")
    out.append("%d rows where a model applies (%s); %d shown, %d more with model and measurement both within 1 point "
               "of 0 or 100%% (largest |residual| among them %.2f points). %d of %d lie more than 3 SE from the model%s" % (
                   len(ts), ", ".join("%s %d" % kv for kv in sorted(applies.items())), shown, hidden, hidden_max,
                   len(flagged), len(ts), "." if not flagged else ": " + "; ".join(
                       "%s n = %s at %s floats (%+.1f points)" % (base(t["memory_spec"]), t["n"], t["budget_floats"],
                                                                 fnum(t["residual_points"])) for t in flagged[:8]) + "."))
    out.append("")
    return out


def theory_notes(theory):
    """The essay frame's rows that a model of memories/theory.hpp describes, in words."""
    ts = [t for t in theory if t["frame"] == "fixed"]
    if not ts:
        return "No theory table (`memcap theory`) was found beside the summary."
    used = [t for t in ts if t["applies"] != "no"]
    why = OrderedDict()
    for t in ts:
        if t["applies"] == "no":
            why[not_modelled(t)] = why.get(not_modelled(t), 0) + 1
    text = ("Dashed lines in the accuracy-vs-n figure are the models of `memories/theory.hpp`, computed by "
            "`memcap theory` (theory.csv), drawn only where the model describes the memory as built: "
            "%d of the %d d = 64 rows of the cache, the grid and HRR. " % (len(used), len(ts)))
    if why:
        text += "The others: " + "; ".join("%s (%d rows)" % (k, v) for k, v in why.items()) + ". "
    if used:
        res = [abs(fnum(t["residual_points"])) for t in used]
        big = [t for t in used if abs(fnum(t["residual_se"])) > 3]
        text += ("Where it applies the largest |model − measured| is %.1f points; %d of %d rows lie more than "
                 "3 SE away%s." % (max(res), len(big), len(used),
                                   "" if not big else " (" + ", ".join(
                                       "%s at B = %s, n = %s: %+.1f" % (base(t["memory_spec"]), t["budget_floats"], t["n"],
                                                                      fnum(t["residual_points"])) for t in big[:6]) + ")"))
    return text




_MODEL_INDEX = {}


def model_nstar(theory, row, t=0.9):
    """The model's n* at t along a capacity row's curve (capacity.capacity_rows: its `group` of summary
    rows): theory.csv's model accuracy at each of the row's (memory spec, task, budget, d, n), crossed
    by crossing.crossing (interpolated in log n); None unless the model applies at every n of the row.
    Its residual against the measured n* is in n."""
    from .crossing import crossing
    import numpy as np
    idx = _MODEL_INDEX.get(id(theory))
    if idx is None:
        idx = {}
        for m in theory:
            if m["applies"] != "no":
                idx[(m["memory_spec"], m["task_spec"], m["budget_floats"], m["d"], m["n"])] = fnum(m["model_accuracy_frac"])
        _MODEL_INDEX.clear()
        _MODEL_INDEX[id(theory)] = idx
    by = defaultdict(list)
    for r in row.get("group") or []:
        k = (r["memory_spec"], r["task_spec"], r["budget_floats"], r["d"], r["n"])
        if k not in idx or math.isnan(idx[k]):
            return None
        by[int(r["n"])].append(idx[k])
    if not by:
        return None
    xs = sorted(by)
    v = crossing(np.array(xs, dtype=float), np.array([[sum(by[x]) / len(by[x]) for x in xs]]), t)[0]
    return float(v)
