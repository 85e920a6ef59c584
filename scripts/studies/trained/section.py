"""Trained at equal state (trained/trained.csv and its summary, from scripts/studies/trained/trained.ini):
every memory with a causal backward pass in the trained frame (`train=layer`: inside a layer of
projections, a short convolution and its family's input-dependent gates, trained with Adam;
docs/training.md) beside the same memory untrained (its constants raced on tuning seeds), at the
same width d and the same budgets, on mqar and assoc_recall.

A row is trained when its memory spec holds `train=layer`; every other row is the untrained frame.
Per (task, budget, memory) the section gives the trained n* at 0.9 [95% interval] and at 0.5, the
untrained n* at 0.9 [interval] and at 0.5 (the settings the race chose beside it), the ratio
trained / untrained at 0.9 with a bootstrap interval (paired over the seed numbers the two curves
share: a seed number is the same Test episodes in both frames; unpaired when they share none), the
state floats, the layer's parameters and how training went (the `message` column of the per-seed
CSV: how many of the seeds' models converged, `‡` on a point where one did not, the learning rates
chosen, the median step at which the held-out loss left the plateau). Every curve is bootstrapped
over this study's own seeds (crossing.read_seeds of trained.csv), never over another sweep's
seeds of the same cell; the study's per-seed CSV is not added to the report's global index
(crossing.SEEDS), so no other section's curve draws from its seeds either.

The trained ordering at each task and budget ranks the memories by n* at 0.9: a memory joins the
tier of the one above it when the paired ratio of the tier's first over it holds 1 in its interval.
It is set beside zoology's published ordering on MQAR at small state (ZOOLOGY: DeltaNet and Gated
DeltaNet first, then RWKV-7, GLA and Mamba-2, Based needing the most state; attention, which holds
every token at full length, is not comparable at a budget): for every pair of memories zoology puts
in different tiers and both measured here, memcap's paired ratio agrees (its interval above 1 in
zoology's direction), ties (holds 1) or reverses it.

The cost: the manifest's recorded times (any top-level key ending in `_seconds`; the manifests of
today's memcap record none, and the section says so), the models' Adam steps from their rows
(`steps`, of the learning rate kept) and, when trained_curves.csv is there, the steps of every
learning rate tried (the last step of each run).

Plain rows (memcap_report.verdict): the trained rows with frame "trained" (they form the verdict's
trained table); the untrained rows with frame "untrained_d32" — they are at d = 32, not the
frontier's best width, so they never enter the untrained table, only the trained table's column
naming the untrained leader at the same width and budgets."""
import os
import statistics
import sys
from collections import OrderedDict

from memcap_report.capacity import cap_text, capacity_rows, nstar
from memcap_report.crossing import fmt_ratio, ratio, read_seeds
from memcap_report.common import (COLOURS, Context, CYCLE, SUMMARY_COLUMNS, base, caches, label, learn_memories, list_words,
                                  measured, name_order, optional_csv, read_manifest, run, save, spec_params, style)
from memcap_report.race import edge_words, settings
from memcap_report.verdict import plain_row

TASKS = ("mqar", "assoc_recall")
NOT_CONVERGED = "‡"  # a point with a model that stopped at the cap, its held-out loss still falling

# zoology's ordering on MQAR at small state (Arora et al., the recall-state figure): tiers, first the best
ZOOLOGY = (("deltanet", "gated_deltanet"), ("rwkv7", "gla", "mamba2"), ("based",))
ZOOLOGY_WORDS = ("DeltaNet and Gated DeltaNet first, then RWKV-7, GLA and Mamba-2, with Based needing the most "
                 "state (attention holds every token at full length: not comparable at a budget)")

CURVE_COLUMNS = ("memory_spec", "task_spec", "budget_floats", "d", "seed", "lr", "chosen", "step", "heldout_loss")


def trained(spec):
    """Whether a memory spec is the trained frame's (`train=layer`)."""
    return spec_params(spec).get("train") == "layer"


def parse_message(msg):
    """A trained row's `message` as a dict: its key=value tokens, and `status` ("converged",
    "not_converged") from the bare words; None for a message that is not a training report."""
    words = (msg or "").split()
    if not words or words[0] != "trained:":
        return None
    out = OrderedDict()
    for w in words[1:]:
        if "=" in w:
            k, v = w.split("=", 1)
            out[k] = v
        elif w in ("converged", "not_converged"):
            out["status"] = w
    return out


def read_models(rows):
    """{(memory_spec, task_spec, budget, d, seed): parsed message} of the trained per-seed rows (one model
    per seed, the same message on each of its n)."""
    out = OrderedDict()
    for r in rows:
        if r.get("status") != "ok" or not trained(r["memory_spec"]):
            continue
        m = parse_message(r.get("message", ""))
        if m is not None:
            out.setdefault((r["memory_spec"], r["task_spec"], int(r["budget_floats"]), r["d"], int(r["seed"])), m)
    return out


def read_failed(rows):
    """{(memory_spec, task_spec, budget, d, seed): message} of the trained models whose rows are errors
    (every learning rate's run failed: the row's message says why)."""
    out = OrderedDict()
    for r in rows:
        if r.get("status") not in ("ok", None) and trained(r["memory_spec"]):
            out.setdefault((r["memory_spec"], r["task_spec"], int(r["budget_floats"]), r["d"], int(r["seed"])),
                           r.get("message", ""))
    return out


def capacities(summary, seeds=None):
    """{(frame, memory, task, budget): capacity row} (capacity.capacity_rows along n, frame "frontier":
    tuned keys read `best`), frame "trained" or "untrained"; bootstrapped over `seeds`."""
    rows, _ = capacity_rows(measured(summary), "frontier", seeds)
    out = OrderedDict()
    for r in rows:
        if base(r["task"]) not in TASKS:
            continue
        frame = "trained" if trained(r["memory_spec"]) else "untrained"
        out[(frame, base(r["memory_spec"]), base(r["task"]), r["budget_floats"])] = r
    return out


def models_of(row, models):
    """The parsed messages of a trained capacity row's models (its seeds), in seed order."""
    specs = {(g["memory_spec"], g["task_spec"], int(g["budget_floats"]), g["d"]) for g in row["group"]}
    return [m for (spec, task, b, d, s), m in sorted(models.items(), key=lambda kv: kv[0][4])
            if (spec, task, b, d) in specs]


def converged(ms):
    """(converged, of): how many of the models converged."""
    return sum(m.get("status") == "converged" for m in ms), len(ms)


def all_converged(ms):
    c, n = converged(ms)
    return n > 0 and c == n


def left_words(ms):
    """The median step at which the held-out loss left the plateau, over the models that left it, and how
    many never did: "225", "250 (1 never)", "never"; "–" without models."""
    steps = [int(m["left_plateau"]) for m in ms if m.get("left_plateau") not in (None, "")]
    left = [s for s in steps if s >= 0]
    never = len(steps) - len(left)
    if not steps:
        return "–"
    if not left:
        return "never"
    med = statistics.median(left)
    text = ("%d" % med) if med == int(med) else "%.0f" % med
    return text + (" (%d never)" % never if never else "")


def lr_words(ms):
    """The learning rates kept, rising: "0.003", "0.003, 0.01"."""
    lrs = sorted({m["lr"] for m in ms if m.get("lr")}, key=float)
    return ", ".join(lrs) or "–"


def layer_params(ms, tr=None, un=None):
    """The layer's parameters: the models' `layer_params`; without it, the trained row's param_floats less
    the untrained row's (param_floats adds the layer's to the memory's own); "–" when neither is there."""
    vs = sorted({int(m["layer_params"]) for m in ms if m.get("layer_params")})
    if not vs and tr is not None and un is not None:
        def floats(r):
            return {int(g["param_floats"]) for g in r["group"] if g.get("param_floats") not in (None, "")}
        a, b = floats(tr), floats(un)
        if len(a) == 1 and len(b) == 1:
            vs = [a.pop() - b.pop()]
    return "–" if not vs else str(vs[0]) if len(vs) == 1 else "%d–%d" % (vs[0], vs[-1])


def state_of(r):
    """State floats at the capacity (the largest n tried where none passes)."""
    at = r["at_capacity"] or max(r["group"], key=lambda x: int(x["n"]))
    return at["state_floats"]


def shared(a, b):
    """Whether two curves share seed numbers (their ratio is then paired)."""
    if a.seeds is None or b.seeds is None:
        return False
    return bool(set(a.seeds.tolist()) & set(b.seeds.tolist()))


def frame_ratio(tr, un, t=0.9):
    """n*_trained / n*_untrained at t (crossing.Ratio): paired over the shared seed numbers, unpaired when
    the two frames share none."""
    return ratio(tr["curve"], un["curve"], t, paired=shared(tr["curve"], un["curve"]))


def points(caps):
    """[(task, budget, memory)] with a trained row, in task, budget and catalog order."""
    keys = {(t, b, m) for (f, m, t, b) in caps if f == "trained"}
    out = []
    for t in TASKS:
        for b in sorted({b for tt, b, _ in keys if tt == t}):
            out += [(t, b, m) for m in name_order(m for tt, bb, m in keys if tt == t and bb == b)]
    return out


def capacity_table(caps, models, manifest=None):
    """(lines, edges): per task, budget and memory: state floats, layer parameters, trained n* at 0.9
    (‡: a model did not converge) and 0.5, untrained n* at 0.9 (the settings chosen) and 0.5, the ratio
    trained / untrained at 0.9, the models converged, the learning rates kept, the median step leaving
    the plateau."""
    edges = OrderedDict()
    lines = ["| task | budget | memory | state floats | layer params | trained n* (0.9) | trained n* (0.5) | "
             "untrained n* (0.9) | untrained n* (0.5) | trained / untrained (0.9) | converged | lr | left plateau (median step) |",
             "|---|---:|---|---:|---:|---|---|---|---|---|---|---|---|"]
    for t, b, m in points(caps):
        tr, un = caps[("trained", m, t, b)], caps.get(("untrained", m, t, b))
        ms = models_of(tr, models)
        c, n = converged(ms)
        floats = state_of(tr)
        if un is not None and state_of(un) != floats:
            floats = "%s / %s" % (floats, state_of(un))
        s = untrained_settings(un, manifest, edges) if un is not None else ""
        cells = [t, str(b), label(m), floats, layer_params(ms, tr, un),
                 cap_text(tr) + ("" if all_converged(ms) else " " + NOT_CONVERGED), cap_text(tr, 0.5),
                 (cap_text(un) + (" (%s)" % s if s else "")) if un else "–", cap_text(un, 0.5) if un else "–",
                 ratio_text(frame_ratio(tr, un)) if un else "–", "%d of %d" % (c, n), lr_words(ms), left_words(ms)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines, edges


def untrained_settings(r, manifest, edges):
    """The settings the race chose at the untrained capacity (race.settings without the width: the study
    fixes d)."""
    return ", ".join(p for p in settings(r, manifest, edges).split(", ") if p and not p.startswith("d="))


def ratio_text(rt):
    return ("tie, " if rt.tie() else "") + fmt_ratio(rt) + ("" if rt.paired or rt.lo is None else " (unpaired)")


# ------------------------------------------------------------------ the ordering

def tiers(caps, frame, task, budget):
    """The memories of a frame at (task, budget) in tiers by n* at 0.9, largest first: [[(memory, row)]];
    a memory joins the tier above when the paired ratio of that tier's first over it holds 1."""
    rows = [(m, r) for (f, m, t, b), r in caps.items() if f == frame and t == task and b == budget]
    order = name_order(m for m, _ in rows)
    rows.sort(key=lambda mr: (-nstar(mr[1]), order.index(mr[0])))
    out = []
    for m, r in rows:
        if out and ratio(out[-1][0][1]["curve"], r["curve"]).tie():
            out[-1].append((m, r))
        else:
            out.append([(m, r)])
    return out


def short(memory):
    return label(memory).split(" (")[0].split(" = ")[0]


def tier_words(ts, values=True):
    """"DeltaNet 12 = Gated DeltaNet 11 > GLA 6.1 > …"."""
    return " > ".join(" = ".join(short(m) + (" %s" % cap_text(r, interval=False) if values else "") for m, r in t)
                      for t in ts)


def ordering_table(caps):
    """Per task and budget: the trained ordering and the untrained one at the same width."""
    lines = ["| task | budget | trained ordering (n* at 0.9; `=`: the paired interval holds 1) | untrained ordering, same d |",
             "|---|---:|---|---|"]
    for t in TASKS:
        for b in sorted({b for (f, _, tt, b) in caps if f == "trained" and tt == t}):
            un = tiers(caps, "untrained", t, b)
            lines.append("| %s | %d | %s | %s |" % (t, b, tier_words(tiers(caps, "trained", t, b)),
                                                     tier_words(un) if un else "–"))
    return lines


def zoology_pairs(caps, task, budget):
    """[(above, below, verdict, ratio)] for every pair zoology puts in different tiers, both trained here
    at (task, budget): verdict "agrees" (memcap's paired interval above 1 the same way), "ties", "reverses"."""
    have = {m: r for (f, m, t, b), r in caps.items() if f == "trained" and t == task and b == budget}
    out = []
    for i, upper in enumerate(ZOOLOGY):
        for lower in ZOOLOGY[i + 1:]:
            for a in upper:
                for c in lower:
                    if a in have and c in have:
                        rt = ratio(have[a]["curve"], have[c]["curve"])
                        out.append((a, c, "ties" if rt.tie() else "agrees" if rt.value > 1 else "reverses", rt))
    return out


def zoology_words(caps):
    """Per task and budget, where memcap's trained ordering agrees with zoology's and where it differs."""
    parts = []
    for t in TASKS:
        for b in sorted({b for (f, _, tt, b) in caps if f == "trained" and tt == t}):
            ps = zoology_pairs(caps, t, b)
            if not ps:
                continue
            agree = [p for p in ps if p[2] == "agrees"]
            tie = [p for p in ps if p[2] == "ties"]
            rev = [p for p in ps if p[2] == "reverses"]
            text = "On %s at %d floats, of the %d pair%s zoology orders memcap orders %d the same way" % (
                t, b, len(ps), "" if len(ps) == 1 else "s", len(agree))
            if tie and len(tie) == len(ps):
                text += ", ties all %d" % len(tie)
            elif tie:
                text += ", ties %d (%s)" % (len(tie), ", ".join("%s–%s" % (short(a), short(c)) for a, c, _, _ in tie))
            if rev:
                text += ", reverses %d (%s)" % (len(rev), "; ".join(
                    "%s above %s: %s / %s %s" % (short(c), short(a), short(a), short(c), fmt_ratio(rt))
                    for a, c, _, rt in rev))
            parts.append(text + ".")
    if not parts:
        return "No two memories zoology orders were trained here."
    here = {m for (f, m, _, _) in caps if f == "trained"}
    cache = name_order(here & set(caches()))
    outside = name_order(here - {m for tier in ZOOLOGY for m in tier} - set(cache))
    return ("Zoology's ordering on MQAR at small state: %s. Against it, a pair agrees when memcap's paired 95%% "
            "interval of the ratio lies above 1 in zoology's direction and ties when it holds 1. %s%s%s" % (
                ZOOLOGY_WORDS, " ".join(parts),
                (" Not in zoology's ordering: %s." % list_words([short(m) for m in outside])) if outside else "",
                (" The %s is left out of the comparison (attention at a budget is a window)." %
                 list_words([short(m) for m in cache])) if cache else ""))


# ------------------------------------------------------------------ training's raise and the models

def raise_words(caps):
    """How far training raises each memory's n* at 0.9: the ratios trained / untrained per memory, and
    how many points are raised, tied, lowered."""
    per = OrderedDict()
    allr = []
    for t, b, m in points(caps):
        un = caps.get(("untrained", m, t, b))
        if un is None:
            continue
        rt = frame_ratio(caps[("trained", m, t, b)], un)
        per.setdefault(m, []).append((t, b, rt))
        allr.append((m, t, b, rt))
    if not allr:
        return "No memory was measured in both frames."
    up = [x for x in allr if not x[3].tie() and x[3].value > 1]
    down = [x for x in allr if not x[3].tie() and x[3].value < 1]
    tie = [x for x in allr if x[3].tie()]
    head = ("Training raises n* at 0.9 at %d of the %d (memory, task, budget) points, ties it at %d (the interval "
            "holds 1, or both frames beyond, or both below, the n tried) and lowers it at %d" % (len(up), len(allr), len(tie), len(down)))
    if down:
        at = OrderedDict()
        for m, t, b, _ in down:
            at.setdefault((t, b), []).append(short(m))
        head += " (%s)" % "; ".join("on %s at %d floats: %s" % (t, b, ", ".join(ms)) for (t, b), ms in at.items())
    body = "; ".join("%s: %s" % (short(m), ", ".join("%s at %d %s" % (t, b, ratio_text(rt)) for t, b, rt in rs))
                     for m, rs in per.items())
    return head + ". Per memory (trained / untrained): " + body + "."


def convergence_words(caps, models, failed=None):
    """How many models converged, which points carry ‡, when the models left the plateau, and the models
    whose training failed (error rows: `failed`)."""
    ms = [(t, b, m, models_of(caps[("trained", m, t, b)], models)) for t, b, m in points(caps)]
    total = sum(len(x[3]) for x in ms)
    if not total:
        return "The trained rows carry no training report (`message`)."
    c = sum(converged(x[3])[0] for x in ms)
    marked = [(t, b, m) for t, b, m, mm in ms if not all_converged(mm)]
    left = [int(x["left_plateau"]) for _, _, _, mm in ms for x in mm if x.get("left_plateau") not in (None, "")]
    never = sum(s < 0 for s in left)
    text = ("%d of the %d trained models converged (the held-out loss stopped improving before the cap); %s" % (
        c, total, "every point's models converged" if not marked else
        "%d of the %d points carry %s (a model stopped at the cap, its loss still falling: its n* is a lower bound "
        "on what training reaches)" % (len(marked), len(ms), NOT_CONVERGED)))
    if left:
        text += "; %d model%s never left the plateau" % (never, "" if never == 1 else "s") if never else \
            "; every model left the plateau"
    if failed:
        by = OrderedDict()
        for (spec, task, b, _, _) in failed:
            key = (base(spec), base(task), b)
            by[key] = by.get(key, 0) + 1
        text += ("; %d model%s failed to train (error rows, left out of n*: %s)" % (
            len(failed), "" if len(failed) == 1 else "s",
            ", ".join("%s on %s at %d floats, %d seed%s" % (short(m), t, b, k, "" if k == 1 else "s")
                      for (m, t, b), k in by.items())))
    return text + "."


def steps_of(ms):
    return [int(m["steps"]) for m in ms if m.get("steps") not in (None, "")]


def cost_words(caps, models, curves, manifest):
    """The study's cost: the manifest's times, the kept runs' steps, every run's steps from the curves."""
    ms = [m for t, b, mm in points(caps) for m in models_of(caps[("trained", mm, t, b)], models)]
    times = [(k, v) for k, v in (manifest or {}).items() if k.endswith("_seconds") and isinstance(v, (int, float))]
    parts = []
    run_on = ""
    if (manifest or {}).get("threads"):
        run_on = " (the sweep ran at %s thread%s%s)" % (manifest["threads"], "" if manifest["threads"] == 1 else "s",
                                                       "" if manifest.get("mpi_ranks", 1) == 1 else
                                                       " on each of %s MPI ranks" % manifest["mpi_ranks"])
    if times:
        parts.append("Cost: the sweep's manifest records %s%s" % (
            ", ".join("%s %.0f s" % (k.replace("_", " "), v) for k, v in times), run_on))
    else:
        parts.append("Cost: the sweep's manifest records no wall or CPU time%s" % run_on)
    steps = steps_of(ms)
    if steps:
        parts.append("%d models, the learning rate kept trained for %d Adam steps in all (%s)" % (
            len(ms), sum(steps), ("%d each" % steps[0]) if min(steps) == max(steps) else
            "median %.0f a model, %d–%d" % (statistics.median(steps), min(steps), max(steps))))
    if curves:
        last = OrderedDict()
        for r in curves:
            k = (r["memory_spec"], r["task_spec"], r["budget_floats"], r["d"], r["seed"], r["lr"])
            last[k] = max(last.get(k, 0), int(r["step"]))
        runs = len(last)
        parts.append("every run the curves hold (trained_curves.csv: each learning rate tried, the tuning seeds' "
                     "included) %d runs, %d steps to their last evaluation" % (runs, sum(last.values())))
    return "; ".join(parts) + "."


# ------------------------------------------------------------------ the curves figure

def curve_key(r):
    return (r["memory_spec"], r["task_spec"], int(r["budget_floats"]), r["d"], int(r["seed"]))


def curves_figure(curves, path, models=None):
    """Held-out loss against step for the learning rate kept, one panel per (task, budget), a line per
    scored model (the keys of `models`: the tuning seed's runs are left out; every run kept when None),
    one colour per memory; False when there are no curves to draw."""
    import matplotlib.pyplot as plt
    kept = [r for r in curves if r.get("chosen") == "1" and r.get("heldout_loss") not in ("", None)
            and (not models or curve_key(r) in models)]
    if not kept:
        return False
    learn_memories(kept)
    panels = OrderedDict()
    for r in kept:
        panels.setdefault((base(r["task_spec"]), int(r["budget_floats"])), OrderedDict()).setdefault(
            (base(r["memory_spec"]), r["seed"]), []).append((int(r["step"]), float(r["heldout_loss"])))
    keys = [k for t in TASKS for k in sorted(k for k in panels if k[0] == t)] + \
        [k for k in panels if k[0] not in TASKS]
    tasks = list(OrderedDict.fromkeys(k[0] for k in keys))
    budgets = sorted({k[1] for k in keys})
    fig, axes = plt.subplots(len(tasks), len(budgets), figsize=(5 * len(budgets), 3.6 * len(tasks)), squeeze=False)
    for i, t in enumerate(tasks):
        for j, b in enumerate(budgets):
            ax = axes[i][j]
            if (t, b) not in panels:
                ax.axis("off")
                continue
            seen = set()
            order = name_order(m for m, _ in panels[(t, b)])
            for (m, seed), pts in sorted(panels[(t, b)].items(), key=lambda kv: (order.index(kv[0][0]), int(kv[0][1]))):
                pts.sort()
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=COLOURS.get(m, CYCLE[0]), lw=1, alpha=0.8,
                        label=short(m) if m not in seen else None)
                seen.add(m)
            style(ax, "Adam step", "held-out loss", logx=False)
            ax.set_title("%s, %d floats" % (t, b))
            ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, path)
    return True


# ------------------------------------------------------------------ the protocol

def load(ctx):
    """The study's summary, its per-seed rows' models, the curves and the manifest; None when
    trained/trained_summary.csv is not there."""
    folder = os.path.join(ctx.reports_dir, "trained")
    per_seed = os.path.join(folder, "trained.csv")
    summary = optional_csv(os.path.join(folder, "trained_summary.csv"), SUMMARY_COLUMNS)
    if not summary:
        return None
    rows = optional_csv(per_seed, ("memory_spec", "task_spec", "budget_floats", "d", "seed", "status", "message"))
    return {"summary": summary, "seeds": read_seeds(per_seed) if rows else None, "models": read_models(rows),
            "failed": read_failed(rows),
            "curves": optional_csv(os.path.join(folder, "trained_curves.csv"), CURVE_COLUMNS),
            "manifest": read_manifest(os.path.join(folder, "trained.csv.manifest.json"))}


def caps_of(data):
    if "_caps" not in data:
        data["_caps"] = capacities(data["summary"], data.get("seeds"))
    return data["_caps"]


def compute(data):
    """Plain rows: the trained points (frame "trained") and the untrained ones at the study's width
    (frame "untrained_d32": only the verdict's trained table reads them, beside the trained leader)."""
    out = []
    for (f, m, t, b), r in caps_of(data).items():
        row = plain_row(r, "trained", t, m)
        row["frame"] = "trained" if f == "trained" else "untrained_d32"
        out.append(row)
    return out


def seeds_words(summary, frame):
    s = sorted({int(r["seeds"]) for r in summary if (frame == "trained") == trained(r["memory_spec"])})
    return "–".join(str(x) for x in (s[:1] + s[-1:] if len(s) > 1 else s)) or "–"


def tasks_tried(summary):
    """"`mqar:vocab=256,…` (n = 4–32), `assoc_recall:…` (n = 4–256)": each task spec and the n it was
    measured at, in both frames."""
    by = OrderedDict()
    for r in measured(summary):
        by.setdefault(r["task_spec"], set()).add(int(r["n"]))
    return ", ".join("`%s` (n = %d–%d)" % (t, min(ns), max(ns)) for t, ns in by.items())


def words(data, ctx, figure=None):
    """Every computed part: the tables and the sentences."""
    caps, models = caps_of(data), data["models"]
    table, edges = capacity_table(caps, models, data["manifest"])
    ds = sorted({int(r["d"]) for r in data["summary"]})
    return OrderedDict(
        capacity_table="\n".join(table), edges=edge_words(edges) or "No untrained setting was chosen at an end of its candidates.",
        ordering_table="\n".join(ordering_table(caps)), zoology=zoology_words(caps), raise_=raise_words(caps),
        convergence=convergence_words(caps, models, data.get("failed")), cost=cost_words(caps, models, data["curves"], data["manifest"]),
        seeds_trained=seeds_words(data["summary"], "trained"), seeds_untrained=seeds_words(data["summary"], "untrained"),
        d=", ".join(str(d) for d in ds), tasks_tried=tasks_tried(data["summary"]),
        memories=list_words([label(m) for m in name_order({m for (f, m, _, _) in caps if f == "trained"})]),
        budgets=list_words([str(b) for b in sorted({b for (_, _, _, b) in caps})]),
        curves=("Held-out loss against Adam step, the learning rate kept, every scored model (one line a seed):\n\n"
                "![training curves](%s)" % figure) if figure else
        "(No training curves: trained_curves.csv is not there.)")


def drawable(data):
    """Whether the curves hold a run to draw (the kept learning rate of a scored model)."""
    return any(r.get("chosen") == "1" and (not data["models"] or curve_key(r) in data["models"]) for r in data["curves"])


def render(data, rows, ctx):
    figure = None
    if drawable(data) and ctx.figures and os.path.isdir(ctx.figures):
        if curves_figure(data["curves"], os.path.join(ctx.figures, "trained_curves.png"), data["models"]):
            figure = "figures/trained_curves.png"
    w = words(data, ctx, figure)
    return (["## Trained at equal state", "",
             "Every memory with a causal backward pass in the trained frame (`train=layer`: the memory inside a layer "
             "of projections, a short convolution and its family's input-dependent gates, trained with Adam until the "
             "held-out loss stops improving or the step cap; docs/training.md) beside the same memory untrained (its "
             "constants chosen on tuning seeds), at d = %s and %s floats (`scripts/studies/trained/trained.ini`, "
             "`reports/trained/`). Trained: %s scored seeds, each its own model; untrained: %s. n* [95%% interval]: "
             "where mean accuracy crosses 0.9 (or 0.5), interpolated in log n, the interval from a bootstrap over "
             "the study's seeds; the ratio trained / untrained is paired over the seed numbers the frames share (the "
             "same Test episodes). %s: a model of the point stopped at the cap without converging." % (
                 w["d"], w["budgets"], w["seeds_trained"], w["seeds_untrained"], NOT_CONVERGED), ""] +
            w["capacity_table"].split("\n") +
            ["", w["edges"], "", "The ordering at equal state:", ""] + w["ordering_table"].split("\n") +
            ["", w["zoology"], "", w["raise_"], "", w["convergence"] + " " + w["cost"], "", w["curves"], ""])


def readme(data, rows, ctx):
    """reports/trained/README.md's computed parts (its template: README.md.in)."""
    figure = "../figures/trained_curves.png" if drawable(data) else None
    return dict(words(data, ctx, figure))


def section(reports_dir):
    """The section's lines ([] when the study's summary is not there)."""
    return run(sys.modules[__name__], Context(reports_dir))
