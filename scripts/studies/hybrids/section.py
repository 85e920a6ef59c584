"""Dividing one budget (hybrids/hybrids_summary.csv, from scripts/studies/hybrids/hybrids.ini): a
window (the softmax cache) and Gated DeltaNet sharing one budget. Per task, noise and budget: the
capacity n* of each part alone (the hybrid at share 1 and 0), of the best split (share raced; the
reads summed, and through a slot), the share the race gave the window at n*, and the best split
over the better part with a paired interval. Beside it, the byte shares of published hybrids'
attention caches, computed from their configs."""
import os
import sys
from collections import OrderedDict

from memcap_report.capacity import cap_text, capacity_rows, compare, nstar, resolved_line, split
from memcap_report.common import SUMMARY_COLUMNS, Context, noise_words, optional_csv, read_manifest, run, spec_params
from memcap_report.crossing import fmt_ratio, load_seeds

# The memories of hybrids.ini, by the role their spec gives them (the sweep's spec, keys raced read `best`).
ROLES = ("cache", "state", "sum", "slot")
ROLE_WORDS = {"cache": "cache alone (share 1)", "state": "Gated DeltaNet alone (share 0)",
              "sum": "best split, sum read", "slot": "best split, slot read"}
# Which parts of a task the tables read: the task itself (assoc_recall written once); overwrite_recall on both slots at once.
PARTS = ("", "both", "passes=1")
TASKS = ("mqar", "assoc_recall", "recent_recall", "overwrite_recall", "salient_recall")
# The threshold each task is read at: 90%, but mqar at 50%: every token is written, so a cache must hold
# the stream (255 writes) to find a pair asked for late, and at 256 and 1024 floats no memory here reads
# 90% even at n = 4 (its 90% crossing lies below the n tried).
THRESHOLDS = {"mqar": 0.5}


def at(task):
    return THRESHOLDS.get(task, 0.9)


def role(spec):
    p = spec_params(spec)
    share = p.get("share")
    if share == "1":
        return "cache"
    if share == "0":
        return "state"
    if share == "best":
        return "slot" if "slot" in p else "sum"
    return None


def capacities(summary):
    """{(task, noise, budget): {role: capacity row}} over the parts read (PARTS), in TASKS' order."""
    out = {}
    for (task, part), rows in split(summary).items():
        if part not in PARTS:
            continue
        caps, _ = capacity_rows(rows, "frontier")
        for r in caps:
            k = role(r["memory_spec"])
            if k:
                out.setdefault((task, r["noise"], r["budget_floats"]), {})[k] = r
    rank = lambda k: (TASKS.index(k[0]) if k[0] in TASKS else len(TASKS), k[0], noise_rank(k[1]), k[2])
    return OrderedDict((k, out[k]) for k in sorted(out, key=rank))


def noise_rank(key):
    if not key:
        return (0, 0.0)
    kind, value = key.split("=")
    return (0, 0.0) if key == "cosine=1" else ((1, -float(value)) if kind == "cosine" else (2, float(value)))


def share_at(r, t=0.9):
    """The window's share the race chose at the largest n passing t ("—" where none does): at 0.9 the
    capacity rule's (its means over slots); at another threshold (mqar, one slot) the largest n whose
    mean reaches it."""
    if t == 0.9:
        spec = r.get("spec_at_capacity")
    else:
        passing = [g for g in r["group"] if float(g["accuracy_mean_frac"] or 0) >= t]
        spec = max(passing, key=lambda g: int(g["n"]))["memory_spec"] if passing else None
    return spec_params(spec).get("share", "—") if spec else "—"


def noise_text(noise):
    return "—" if not noise else noise_words(noise, short=True)


def best_part(roles, t=0.9):
    """The part alone with the larger n* at t (the cache on a tie of point values)."""
    c, s = roles.get("cache"), roles.get("state")
    if c is None or s is None:
        return c or s
    return c if nstar(c, t) >= nstar(s, t) else s


def table(caps):
    """The Markdown table: per (task, noise, budget) the parts' and the splits' n*, the share chosen, the ratio."""
    lines = ["| task | noise | budget | cache alone | Gated DeltaNet alone | best split (sum) | share | best split (slot) | "
             "share | best split ÷ better part |",
             "|---|---|---:|---|---|---|---:|---|---:|---|"]
    for (task, noise, budget), roles in caps.items():
        t = at(task)
        cells = [cap_text(roles[k], t) if k in roles else "—" for k in ("cache", "state")]
        for k in ("sum", "slot"):
            cells += [cap_text(roles[k], t) if k in roles else "—", share_at(roles[k], t) if k in roles else "—"]
        cells.append(ratio_text(roles, t))
        name = task if t == 0.9 else "%s (n* at %d%%)" % (task, round(100 * t))
        lines.append("| %s | %s | %d | %s |" % (name, noise_text(noise), budget, " | ".join(cells)))
    return lines


def split_best(roles, t=0.9):
    """The split (sum or slot) with the larger n* at t."""
    s = [roles[k] for k in ("sum", "slot") if k in roles]
    return max(s, key=lambda r: nstar(r, t)) if s else None


def ratio_text(roles, t=0.9):
    a, b = split_best(roles, t), best_part(roles, t)
    if a is None or b is None:
        return "—"
    r = compare(a, b, t)
    return fmt_ratio(r) + (" (tie)" if r.tie() else "")


def verdicts(caps):
    """(above, tie, below, shares): points where the best split's n* is above the better part's (paired
    interval above 1), tied with it, below it; and {task: [the share the best split chose at its n*]}."""
    above, tie, below, shares = [], [], [], OrderedDict()
    for k, roles in caps.items():
        t = at(k[0])
        a, b = split_best(roles, t), best_part(roles, t)
        if a is None or b is None:
            continue
        r = compare(a, b, t)
        (tie if r.tie() else above if r.value > 1 else below).append(k)
        s = share_at(a, t)
        if s != "—":
            shares.setdefault(k[0], []).append(float(s))
    return above, tie, below, shares


def point_words(ks):
    return ", ".join("%s%s at %d" % (t, "" if not n else " (%s)" % noise_words(n, short=True), b) for t, n, b in ks)


def share_words(values):
    lo, hi = min(values), max(values)
    return "%g" % lo if lo == hi else "%g–%g" % (lo, hi)


def answer(caps):
    """Two sentences: what share of the state attention should get, and where a divided memory leads."""
    above, tie, below, shares = verdicts(caps)
    if not shares:
        return ""
    whole = [t for t, v in shares.items() if min(v) == 1]
    part = [t for t, v in shares.items() if min(v) < 1]
    first = "At its n* the best split gave the window %s." % "; ".join(
        "%s %s (%d point%s)" % (t, share_words(v), len(v), "" if len(v) == 1 else "s") for t, v in shares.items())
    if whole:
        first += " Attention should get the whole budget on %s (share 1 at every point)" % ", ".join(whole)
        first += ("; on %s the race gave the recurrent state a part at some points" % ", ".join(part) if part else "") + "."
    total = len(above) + len(tie) + len(below)
    second = ("The best split stores more than the better part alone (a paired 95%% interval above 1) at %d of %d "
              "points%s; it ties with it at %d and stores less at %d%s." % (
                  len(above), total, (" (" + point_words(above) + ")") if above else "", len(tie), len(below),
                  (" (" + point_words(below) + ": the race, on 3 tuning seeds, chose a split the scored seeds read "
                   "lower)") if below else ""))
    return first + " " + second


# ------------------------------------------------------------------ published hybrids' byte shares

# From each model's config.json (Hugging Face): per layer, the attention cache's floats per token and
# the recurrent layer's state (its recurrence and its short convolution's last kernel−1 inputs);
# both counted at one precision. `window`: a sliding window's length (the cache stops growing there).
PUBLISHED = [
    dict(name="Qwen3-Next-80B-A3B", config="Qwen/Qwen3-Next-80B-A3B-Instruct, config.json",
         attention_layers=12, recurrent_layers=36, per_token=2 * 2 * 256, window=None,
         state=32 * 128 * 128 + (2 * 16 * 128 + 32 * 128) * 3,
         words="48 layers, full_attention_interval 4: 12 gated-attention layers with 2 KV heads of head_dim 256 "
               "(2 × 2 × 256 = 1024 floats a token a layer) and 36 Gated DeltaNet layers of 32 value heads × "
               "128 × 128 (524,288) plus the convolution's last 3 inputs of q, k, v (3 × (2·16·128 + 32·128) = 24,576)"),
    dict(name="Kimi Linear 48B-A3B", config="moonshotai/Kimi-Linear-48B-A3B-Instruct, config.json",
         attention_layers=7, recurrent_layers=20, per_token=512 + 64, window=None,
         state=32 * 128 * 128 + 3 * (3 * 32 * 128),
         words="27 layers: 7 MLA layers caching kv_lora_rank 512 + qk_rope_head_dim 64 = 576 floats a token a "
               "layer, and 20 KDA layers of 32 heads × 128 × 128 (524,288) plus the short convolution's last 3 "
               "inputs of q, k, v (3 × 3 × 4096 = 36,864)"),
    dict(name="Jamba v0.1", config="ai21labs/Jamba-v0.1, config.json",
         attention_layers=4, recurrent_layers=28, per_token=2 * 8 * 128, window=None,
         state=8192 * 16 + 8192 * 3,
         words="32 layers, attn_layer_period 8: 4 attention layers with 8 KV heads of 4096/32 = 128 (2 × 8 × 128 = "
               "2048 floats a token a layer) and 28 Mamba layers of d_inner = 2 × 4096 = 8192 channels × d_state "
               "16 (131,072) plus the convolution's last 3 inputs (24,576)"),
    dict(name="RecurrentGemma-2B", config="google/recurrentgemma-2b, config.json",
         attention_layers=8, recurrent_layers=18, per_token=2 * 1 * 256, window=2048,
         state=2560 + 2560 * 3,
         words="26 layers in the pattern (recurrent, recurrent, attention): 8 local-attention layers with one KV "
               "head of 2560/10 = 256 (512 floats a token a layer) over a 2048-token window, and 18 RG-LRU layers "
               "of lru_width 2560 plus the convolution's last 3 inputs (7,680)"),
]


def published_rows(tokens=(4096, 32768)):
    """Per model: the attention cache's and the recurrent state's floats, the attention's share at each
    length in `tokens`, and the length at which the two are equal."""
    out = []
    for m in PUBLISHED:
        recurrent = m["recurrent_layers"] * m["state"]
        per_token = m["attention_layers"] * m["per_token"]
        shares = []
        for t in tokens:
            held = min(t, m["window"]) if m["window"] else t
            attention = per_token * held
            shares.append((t, attention, attention / (attention + recurrent)))
        equal = recurrent / per_token
        out.append(dict(m, recurrent=recurrent, per_token_all=per_token, shares=shares,
                        equal=equal if not m["window"] or equal <= m["window"] else None))
    return out


def published_table(tokens=(4096, 32768)):
    lines = ["| model | attention cache a token | recurrent state | attention's share at %s | equal at |" %
             " and ".join("%dK" % (t // 1024) for t in tokens),
             "|---|---:|---:|---|---:|"]
    for r in published_rows(tokens):
        lines.append("| %s | %s floats | %s floats | %s | %s |" % (
            r["name"], "{:,}".format(r["per_token_all"]), "{:,}".format(r["recurrent"]),
            " and ".join("%.1f%%" % (100 * s) for _, _, s in r["shares"]),
            "%s tokens" % "{:,}".format(round(r["equal"])) if r["equal"] is not None else "never"))
    lines.append("")
    for r in published_rows(tokens):
        lines.append("- **%s** (%s): %s. Recurrent: %d × %s = %s floats; attention: %d × %d = %s floats a token%s." % (
            r["name"], r["config"], r["words"], r["recurrent_layers"], "{:,}".format(r["state"]),
            "{:,}".format(r["recurrent"]), r["attention_layers"], r["per_token"], "{:,}".format(r["per_token_all"]),
            ", up to %d tokens" % r["window"] if r["window"] else ""))
    return lines


# ------------------------------------------------------------------ the section

def load(ctx):
    """(summary, manifest); None when hybrids/hybrids_summary.csv is not there."""
    load_seeds(os.path.join(ctx.reports_dir, "hybrids", "hybrids.csv"))  # per seed: the crossings' intervals
    summary = optional_csv(os.path.join(ctx.reports_dir, "hybrids", "hybrids_summary.csv"), SUMMARY_COLUMNS)
    if not summary:
        return None
    return summary, read_manifest(os.path.join(ctx.reports_dir, "hybrids", "hybrids.csv.manifest.json"))


def compute(data):
    """No plain rows: the hybrid's capacities stay out of "Which memory when" (its parts are there as themselves)."""
    return []


def render(data, rows, ctx):
    summary, _ = data
    caps = capacities(summary)
    seeds = sorted({r["seeds"] for r in summary}, key=int)
    text = ["## Dividing one budget: a window beside a recurrent state", "",
            "The softmax cache (FIFO) and Gated DeltaNet sharing one budget (`hybrid`, `memories/hybrid/`; "
            "`scripts/studies/hybrids/hybrids.ini`, `reports/hybrids/`): each part alone, and the best split — the "
            "window's share raced over 0, 1/8, 1/4, 1/2, 3/4, 7/8 and 1 with the width and each part's setting, "
            "the reads summed or through a slot — on tuning seeds disjoint from the %s scored seeds. Capacity: n* "
            "[95%% interval] at 90%%; *share*: the window's share chosen at the largest n passing; the last column: "
            "the best split's n* over the better part's, with a paired interval." % "/".join(seeds), "",
            resolved_line([r for roles in caps.values() for r in roles.values()], "Resolution"), ""]
    return text + table(caps) + ["", answer(caps), ""]


def section(reports_dir):
    """The section's lines ([] when the study's summary is not there)."""
    return run(sys.modules[__name__], Context(reports_dir))


def readme(data, rows, ctx):
    """reports/hybrids/README.md's computed parts (its template: README.md.in)."""
    summary, _ = data
    caps = capacities(summary)
    return {"capacity_table": "\n".join(table(caps)), "answer": answer(caps),
            "published_table": "\n".join(published_table())}
