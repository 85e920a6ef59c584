"""The race's settings as the reports read them: which spec values the race chose (`best`), the
candidates a spec or a sweep's manifest lists, whether a chosen value sits at an end of them, the
width and settings chosen at a capacity point in words, and why it won (the sweep's race file,
NAME_race.csv: the runner-up and the margin)."""

import re

import os

from .common import base, fnum, label, optional_csv, spec_params, tuned_values

# The narrowest default width of d = best in manifests that do not state theirs (before it went down to 2).
NARROWEST_UNSTATED = 4

# Decays: 1 (no decay) is the end of their range, not only of their candidates, so it is not flagged.
DECAYS = ("gamma", "alpha", "w", "rho")
# Likewise the cache's hard argmax (beta = inf) and no recency bias (slope = 0): ends of their ranges.
RANGE_ENDS = (("beta", "inf"), ("slope", "0"))


def is_raced(value):
    """A spec value the race chooses: `best` (the parameter's own candidates) or `best:v1/v2/...`."""
    return value == "best" or value.startswith("best:")


def listed(spec, key):
    """The candidates a memory spec lists for `key` (`beta=best:0.005/0.01` -> ['0.005', '0.01']), else None."""
    v = spec_params(spec).get(key, "")
    return v[len("best:"):].split("/") if v.startswith("best:") else None


def candidates(manifest):
    """{memory: {key: [candidates]}}: the race candidates a sweep's manifest records."""
    return manifest.get("race_candidates", {}).get("memories", {})


def narrowest_width(manifest):
    """The narrowest width a sweep's d = best raced by default, as its manifest states it ("d = best: powers of
    two from 2 up to the budget, ..." in race_candidates); NARROWEST_UNSTATED for a manifest that does not."""
    m = re.search(r"powers of two from (\d+)", str((manifest or {}).get("race_candidates", {}).get("widths", "")))
    return int(m.group(1)) if m else NARROWEST_UNSTATED


def at_end(manifest, memory, key, value, cands=None):
    """'lowest' or 'highest' when `value` is the first or last of `cands` (the candidates a spec listed),
    else of the candidates the sweep's manifest records for memory's `key` (race_candidates); None when
    neither is known (no manifest) or there is one candidate."""
    if cands is None:
        cands = candidates(manifest).get(memory, {}).get(key)
    if not cands or len(cands) < 2:
        return None
    vals = sorted(fnum(c) for c in cands)
    return "lowest" if fnum(value) == vals[0] else "highest" if fnum(value) == vals[-1] else None


def settings(r, manifest=None, edges=None):
    """The width and settings chosen at the capacity (a capacity.capacity_rows row): "d=64, beta=0.1";
    a setting at an end of the candidates the manifest records gets a dagger and is collected in
    `edges` {(memory, key, value, end): [budgets]}."""
    if r["capacity"] is None or not r["spec_at_capacity"]:
        return ""
    p = spec_params(r["spec_at_capacity"])
    p.update(tuned_values((r.get("at_capacity") or {}).get("tuned", "")))
    out = ["d=%d" % r["d_at_capacity"]]
    for k in [k for k in r["tuned_keys"] if k != "d"]:
        v = p.get(k, "?")
        ranged = (k in DECAYS and v == "1") or (k, v) in RANGE_ENDS
        end = None if ranged else at_end(manifest or {}, base(r["memory_spec"]), k, v)
        out.append("%s=%s%s" % (k, v, "†" if end else ""))
        if end and edges is not None:
            edges.setdefault((base(r["memory_spec"]), k, v, end), []).append(r["budget_floats"])
    return ", ".join(out)


def edge_words(edges):
    """One sentence naming the settings chosen at an end of their candidates ("" when none)."""
    if not edges:
        return ""
    items = ["%s's %s = %s (the %s) at %s floats" % (label(m), k, v, end, ", ".join(str(b) for b in sorted(set(bs))))
             for (m, k, v, end), bs in edges.items()]
    return ("† chosen at an end of its candidates (`memcap list`): " + "; ".join(items) + ". The candidates "
            "may stop short of the memory's best there, and its capacity is then a lower bound. (A decay of 1, no "
            "decay, is the end of its range and is not flagged.)")


# ------------------------------------------------------------------ why each setting won (NAME_race.csv)

RACE_COLUMNS = ["round", "memory_spec", "task_spec", "readout", "budget_floats", "n", "candidates", "tuned", "mean", "se",
                "seeds", "runner_up", "runner_up_mean", "runner_up_se", "runner_up_seeds", "margin", "reason"]


def read_races(out, name="capacity"):
    """The race file beside a sweep's CSV (DIR/NAME_race.csv, docs/sweeps.md): {(memory, task_spec, readout,
    budget_floats, n): [rows]}; {} when the sweep wrote none (a sweep of an older memcap)."""
    races = {}
    for r in optional_csv(os.path.join(out, "%s_race.csv" % name), RACE_COLUMNS):
        key = (base(r["memory_spec"]), r["task_spec"], r["readout"], r["budget_floats"], r["n"])
        races.setdefault(key, []).append(r)
    return races


def race_at(races, at):
    """The race row of a summary row `at` (a capacity point): its group's, whose winner is the row's choice; else None."""
    if not races or not at:
        return None
    key = (base(at["memory_spec"]), at["task_spec"], at["readout"], at["budget_floats"], at["n"])
    return next((r for r in races.get(key, []) if r["tuned"] == at.get("tuned", "")), None)


def tuned_words(tuned):
    """"d=16,beta=8" -> "d=16, β=8"."""
    names = {"beta": "β", "rho": "ρ", "alpha": "α", "gamma": "γ"}
    return ", ".join("%s=%s" % (names.get(k, k), v) for k, v in (kv.split("=", 1) for kv in tuned.split(",") if "=" in kv))


def mean_words(mean, se, seeds):
    """"0.984 ± 0.016 (4 seeds)"; "not run" when the race left it alone along n."""
    if mean == "":
        return "not run (left alone along n)"
    return "%.3f ± %.3f (%s seed%s)" % (fnum(mean), fnum(se), seeds, "" if seeds == "1" else "s")


def why_cells(row):
    """The cells of a "why each setting won" table row: chosen, its tuning mean, the runner-up, its mean, margin, reason."""
    runner = tuned_words(row["runner_up"]) if row["runner_up"] else "—"
    return [tuned_words(row["tuned"]), mean_words(row["mean"], row["se"], row["seeds"]), runner,
            mean_words(row["runner_up_mean"], row["runner_up_se"], row["runner_up_seeds"]) if row["runner_up"] else "—",
            "%+.3f" % fnum(row["margin"]) if row["margin"] != "" else "—", row["reason"]]
