"""Tests of the section "Where decays, overwrites and gates pay" (scripts/studies/streams/section.py) and of
the task variants and slots in the generic capacity tables (common.task_labels, capacity.capacity_rows,
sweep.capacity_table): synthetic summaries whose answers are known, and one run on the real fixture
fixture/streams/ (a small sweep: `build/memcap sweep fixture/streams/streams_mini.ini --out DIR`, then
`build/memcap aggregate DIR/streams_mini.csv --out fixture/streams/streams_summary.csv`, with the sweep's
manifest beside it as streams.csv.manifest.json).

    /usr/bin/python3 -m unittest discover -s scripts/studies -t scripts
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from memcap_report import capacity, common, sweep  # noqa: E402
from studies.streams import section as streams  # noqa: E402

part_capacities = streams.part_capacities  # in the study's order
from memcap_report.capacity import horizon, overwrite_both  # noqa: E402
from memcap_report.common import SUMMARY_COLUMNS  # noqa: E402
from memcap_report.common import read_catalog  # noqa: E402

# names, capacity axes and slots from memcap's tables (memcap list --json), as a reports directory has them
read_catalog(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "tests", "report", "fixtures", "sweep"))

FIXTURES = os.path.join(HERE, "fixture")  # the reports directory whose streams/ is the fixture sweep
SWEEP = os.path.join(ROOT, "tests", "report", "fixtures", "sweep")  # the main job's fixture
RECENT = "recent_recall:ratio=8,buckets=8,queries=64,noise=0,cosine=%s"
OVERWRITE = "overwrite_recall:rewrite=0.25,order=interleaved,rewritten=16,queries=64,noise=0,cosine=%s"
SALIENT = "salient_recall:distractors=3,queries=32,noise=0,cosine=%s"
GATED = SALIENT + ",gate=all"  # every memory's writes gated (the default, gate=none, is left out)
ASSOC1 = "assoc_recall:queries=32,noise=0,cosine=%s,control=none,vocab=0,keys=random,steps=1000,lr=0.01,temp=0.1"


def assoc(cosine, p):
    """An assoc_recall spec as memcap writes it: passes left out when the pairs are written once."""
    return ASSOC1 % cosine + (",passes=%d" % p if p != 1 else "")


def row(spec, task, budget, n, acc, tuned, d=16, slot="", se="0.01"):
    r = {c: "" for c in SUMMARY_COLUMNS}
    r.update(memory=spec.split(":")[0], memory_spec=spec, task_spec=task, readout="native", budget_floats=str(budget),
             state_floats=str(budget), d=str(d), n=str(n), slot=str(slot), seeds="10", errors="0", queries="640",
             accuracy_mean_frac=str(acc), accuracy_se_frac=se, tuned=tuned)
    return r


def curve_rows(spec, tuned, budget, w, accs, cosine="1", d=16):
    """recent_recall rows of one window w: one per lag bucket (len(accs) buckets, slot = the bucket's largest lag)."""
    k = len(accs)
    return [row(spec, RECENT % cosine, budget, w, a, tuned, d=d, slot=(i + 1) * w // k) for i, a in enumerate(accs)]


def write_summary(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def synthetic():
    """A study whose answers are known:
    recent_recall at 1024 floats, W = 8, 16, 32 (the largest):
      softmax       passes every lag at every W: capacity ≥32, horizon ≥32
      retnet        W = 32: 1, 1, 1, 0.5 at lags 8, 16, 24, 32: horizon 24 (gamma = 0.99 there); capacity 16
      linear        fails at W = 8: capacity <8
    overwrite_recall at 1024 floats, n = 16, 32, 64:
      delta         untouched ≥64, rewritten 32 (misses at 64)
      linear        untouched 32, rewritten <16
    salient_recall, no memory gated: linear 16, the cache 16 (equal);
      every memory gated (gate=all): linear ≥64, the cache 32 (linear leads, ≥×2 the cache)
    assoc_recall passes = 1: linear 32, delta 32 (tied); passes = 2: linear 8, delta 32; passes = 4: linear 8, delta 16
    """
    rows = []
    for w in (8, 16, 32):
        rows += curve_rows("softmax:beta=64", "d=4,beta=64", 1024, w, [1, 1, 1, 1], d=4)
        g = "0.99" if w == 32 else "0.97"
        accs = [1, 1, 1, 0.5] if w == 32 else [1, 1, 1, 0.95]
        rows += curve_rows("retnet:gamma=%s,phi=proj,nu=1" % g, "d=32,gamma=%s" % g, 1024, w, accs, d=32)
        rows += curve_rows("linear:phi=proj,nu=1", "d=32", 1024, w, [0.5, 0.4, 0.3, 0.2], d=32)
    for n in (16, 32, 64):
        rows.append(row("delta:beta=0.5,phi=proj,nu=1", OVERWRITE % "1", 1024, n, 1.0, "d=32,beta=0.5", d=32, slot=0))
        rows.append(row("delta:beta=0.5,phi=proj,nu=1", OVERWRITE % "1", 1024, n, 0.95 if n < 64 else 0.6,
                        "d=32,beta=0.5", d=32, slot=1))
        rows.append(row("linear:phi=proj,nu=1", OVERWRITE % "1", 1024, n, 1.0 if n < 64 else 0.5, "d=32", d=32, slot=0))
        rows.append(row("linear:phi=proj,nu=1", OVERWRITE % "1", 1024, n, 0.5, "d=32", d=32, slot=1))
    for n in (16, 32, 64):
        rows.append(row("linear:phi=proj,nu=1", SALIENT % "1", 1024, n, 0.95 if n == 16 else 0.3, "d=32", d=32))
        rows.append(row("softmax:beta=64", SALIENT % "1", 1024, n, {16: 0.95, 32: 0.5, 64: 0.2}[n], "d=4,beta=64", d=4))
        rows.append(row("linear:phi=proj,nu=1", GATED % "1", 1024, n, 0.97, "d=32", d=32))
        rows.append(row("softmax:beta=64", GATED % "1", 1024, n, 0.99 if n <= 32 else 0.5, "d=4,beta=64", d=4))
    caps = {1: (32, 32), 2: (8, 32), 4: (8, 16)}
    for p, (lin, dl) in caps.items():
        for n in (8, 16, 32, 64):
            rows.append(row("linear:phi=proj,nu=1", assoc("1", p), 1024, n, 0.99 if n <= lin else 0.2, "d=32", d=32))
            rows.append(row("delta:beta=0.1,phi=proj,nu=1", assoc("1", p), 1024, n, 0.99 if n <= dl else 0.2,
                            "d=32,beta=0.1", d=32))
    return rows


class Horizon(unittest.TestCase):
    def test_the_last_lag_before_the_first_miss(self):
        self.assertEqual(horizon([(8, 1, 0), (16, 1, 0), (24, 1, 0), (32, 0.5, 0)]), 24)
        self.assertEqual(horizon([(32, 0.5, 0), (8, 1, 0), (16, 0.5, 0), (24, 1, 0)]), 8)  # not the last pass
        self.assertIsNone(horizon([(8, 0.89, 0), (16, 1, 0)]))
        self.assertEqual(horizon([(8, 1, 0), (16, 0.9, 0)]), 16)  # 0.9 itself passes

    def test_read_at_the_largest_window_with_the_decay_chosen_there(self):
        hz = streams.horizons(synthetic())
        w, h, curve, r = hz[("retnet", "cosine=1", 1024)]
        self.assertEqual((w, h), (32, 24))
        self.assertEqual([c[0] for c in curve], [8, 16, 24, 32])
        self.assertIn("gamma=0.99", r["memory_spec"])
        self.assertIsNone(hz[("linear", "cosine=1", 1024)][1])
        lines, _ = streams.horizon_table(hz, {}, {})
        text = "\n".join(lines)
        self.assertIn("| RetNet | noise 0 | 24 (d=32, gamma=0.99) |", text)
        self.assertIn("≥32 (d=4, beta=64)", text)  # every lag passes: a lower bound
        self.assertIn("| linear attention (grid) | noise 0 | <8 (d=32) |", text)

    def test_window_capacity_averages_the_lag_buckets(self):
        # retnet at W = 32: mean of 1, 1, 1, 0.5 = 0.875 < 0.9, so the capacity is 16, not 32 (any slot passing)
        caps = part_capacities(synthetic())[("recent_recall", "")]
        self.assertEqual(caps[("retnet", "cosine=1", 1024)]["capacity"], 16)
        self.assertEqual(caps[("softmax", "cosine=1", 1024)]["capacity"], 32)
        pts, axis, _ = capacity.capacity_points("recent_recall", curve_rows("x", "d=4", 1024, 8, [1, 0.7]))
        self.assertEqual((pts, axis), ([(8, 0.85)], "n"))


class Variants(unittest.TestCase):
    def test_task_labels(self):
        one, two = ASSOC1 % "1" + ",passes=1", ASSOC1 % "1" + ",passes=2"
        labels = common.task_labels([one, ASSOC1 % "0.72" + ",passes=1", two])
        self.assertEqual(labels[one], "assoc_recall:passes=1")
        self.assertEqual(labels[ASSOC1 % "0.72" + ",passes=1"], "assoc_recall:passes=1")  # noise: its own column
        self.assertEqual(labels[two], "assoc_recall:passes=2")
        # passes left out (written once, as memcap writes it): the bare name beside passes=2
        labels = common.task_labels([ASSOC1 % "1", two, ASSOC1 % "0.72"])
        self.assertEqual([labels[ASSOC1 % "1"], labels[two], labels[ASSOC1 % "0.72"]],
                         ["assoc_recall", "assoc_recall:passes=2", "assoc_recall"])
        one = common.task_labels([ASSOC1 % "1", ASSOC1 % "0.72", RECENT % "1", RECENT % "0.72"])
        self.assertEqual(set(one.values()), {"assoc_recall", "recent_recall"})  # one variant: the bare name

    def test_passes_are_not_merged(self):
        caps = part_capacities(synthetic())
        got = {p: caps[("assoc_recall", p)][("linear", "cosine=1", 1024)]["capacity"] for p in ("passes=1", "passes=2",
                                                                                               "passes=4")}
        self.assertEqual(got, {"passes=1": 32, "passes=2": 8, "passes=4": 8})
        rows, _ = capacity.capacity_rows([r for r in synthetic() if r["task_spec"].startswith("assoc")], "frontier")
        lin = {r["task"]: r["capacity"] for r in rows if r["memory_spec"].startswith("linear")}
        self.assertEqual(lin, {"assoc_recall": 32, "assoc_recall:passes=2": 8, "assoc_recall:passes=4": 8})
        table = sweep.capacity_table([r for r in synthetic() if r["task_spec"].startswith("assoc")])
        dl = {c["task"]: c["capacity_at_0.9"] for c in table if c["memory"] == "delta"}
        self.assertEqual(dl, {"assoc_recall": "32", "assoc_recall:passes=2": "32", "assoc_recall:passes=4": "16"})

    def test_passes_table_and_words(self):
        lines, per, parts = streams.passes_table(part_capacities(synthetic()), {}, {})
        text = "\n".join(lines)
        self.assertIn("| linear attention (grid) | noise 0 | 1024 | 35 (d=32) | 8.7 (d=32) | 8.7 (d=32) |", text)
        words = streams.passes_words(per, parts)
        self.assertIn("falls for linear attention (grid) and DeltaNet", words)


class Overwrites(unittest.TestCase):
    def test_each_slot_has_its_own_capacity(self):
        caps = part_capacities(synthetic())
        rw, un = caps[("overwrite_recall", "rewritten")], caps[("overwrite_recall", "untouched")]
        self.assertEqual(rw[("delta", "cosine=1", 1024)]["capacity"], 32)
        self.assertEqual(un[("delta", "cosine=1", 1024)]["capacity"], 64)
        self.assertIsNone(rw[("linear", "cosine=1", 1024)]["capacity"])
        self.assertEqual(un[("linear", "cosine=1", 1024)]["capacity"], 32)
        words = streams.overwrite_words(caps)
        self.assertIn("linear attention (grid) below at 1 of 1", words)

    def test_who_replaces_a_value_is_computed_from_the_rows(self):
        rows = synthetic()
        for n in (16, 32, 64):  # a cache whose raced slope reads the later copy: both slots pass up to 32
            for slot, acc in ((0, 1.0 if n < 64 else 0.5), (1, 1.0 if n < 64 else 0.4)):
                rows.append(row("softmax:beta=inf,slope=1", OVERWRITE % "1", 1024, n, acc, "d=4,beta=inf,slope=1", d=4, slot=slot))
        words = streams.replace_words(part_capacities(rows))
        self.assertIn("at every (noise, budget) point: softmax cache = sliding-window attention and DeltaNet", words)
        self.assertIn("at none: linear attention (grid)", words)
        self.assertIn("the fixed state storing the most (ties: a paired ratio interval of n* holding 1): DeltaNet (`delta` = `deltanet`) at 1, of 1 points", words)
        # n* 35.9 against DeltaNet's 35.3, interpolated; synthetic rows have no per-seed data, hence no interval: more
        self.assertIn("against it the cache stores more at 1.", words)
        self.assertIn("The cache's raced recency slope at its capacity: 1 at 1 point.", words)
        # slope = 0 binds as left out of the spec: read from the tuned column
        rows = [dict(r, memory_spec=r["memory_spec"].replace(",slope=1", ""), tuned=r["tuned"].replace("slope=1", "slope=0"))
                for r in rows]
        self.assertIn("slope at its capacity: 0 at 1 point.", streams.replace_words(part_capacities(rows)))
        self.assertEqual(streams.replace_words(part_capacities([r for r in rows if "overwrite" not in r["task_spec"]])), "")

    def test_the_generic_table_has_a_row_per_slot(self):
        rows = [r for r in synthetic() if r["task_spec"].startswith("overwrite")]
        table = {(c["memory"], c["task"]): c["capacity_at_0.9"] for c in sweep.capacity_table(rows)}
        self.assertEqual(table[("delta", "overwrite_recall (rewritten)")], "32")
        self.assertEqual(table[("delta", "overwrite_recall (untouched)")], "64")
        self.assertEqual(table[("delta", "overwrite_recall")], "32")  # the mean of the two slots per n
        self.assertEqual(table[("linear", "overwrite_recall (rewritten)")], "")

    def test_accuracy_at_one_n(self):
        lines, n, acc = streams.overwrite_table(synthetic(), {}, {})
        self.assertEqual(n, 64)
        self.assertEqual(acc[("delta", "cosine=1", 1024)], ((0.6, 0.01), (1.0, 0.01)))
        self.assertIn("0.60 ± 0.01 / 1.00 ± 0.01 (d=32, beta=0.5)", "\n".join(lines))
        self.assertEqual(streams.closest_n({16, 32, 128}), 32)  # as close as 128 on a log scale: the smaller
        self.assertEqual(streams.closest_n({16, 48}), 48)


class WhichMemoryWhen(unittest.TestCase):
    def setUp(self):
        self.lines, self.points = streams.which_table(part_capacities(synthetic()), {}, {})
        self.text = "\n".join(self.lines)

    def test_the_leader_stores_the_most(self):
        by = {(p[0], p[2]): (p[3], p[4]["capacity"]) for p in self.points}
        self.assertEqual(by[(("salient_recall", ""), 1024)], (["linear"], 16))  # the frames are not merged
        self.assertEqual(by[(("salient_recall", "gate=all"), 1024)], (["linear"], 64))
        self.assertEqual(by[(("recent_recall", ""), 1024)], (["retnet"], 16))  # the cache is beside, not ranked
        self.assertEqual(by[(("assoc_recall", "passes=1"), 1024)], (["linear", "delta"], 32))  # a tie: both
        self.assertEqual(by[(("assoc_recall", "passes=2"), 1024)], (["delta"], 32))
        self.assertNotIn(("overwrite_recall", "untouched"), [p[0] for p in self.points])  # beside both together
        self.assertNotIn(("overwrite_recall", "rewritten"), [p[0] for p in self.points])
        self.assertEqual(by[(("overwrite_recall", "both"), 1024)], (["delta"], 32))  # the lower of its slots' 32, ≥64

    def test_the_rows(self):
        self.assertIn("| recent_recall (window W) | noise 0 | 1024 | RetNet (d=32, gamma=0.97) | 27 | "
                      "≥32 (d=4, beta=64) | fewer (≤×0.86) |", self.text)
        # n* interpolated without per-seed rows (no interval): 17 against the cache's 17, a ratio of 0.98, not a tie
        self.assertIn("| salient_recall (marked pairs, no memory gated) | noise 0 | 1024 | linear attention (grid) (d=32) | "
                      "17 | 17 (d=4, beta=64) | fewer (×0.98) |", self.text)
        self.assertIn("| salient_recall:gate=all (marked pairs, every memory gated) | noise 0 | 1024 | linear attention "
                      "(grid) (d=32) | ≥64 | 36 (d=4, beta=64) | more (≥×1.76) |", self.text)  # the largest n tried passes: ≥
        self.assertIn("DeltaNet (`delta` = `deltanet`) (d=32, beta=0.5; rewritten 35; untouched ≥64) | 35 |", self.text)
        self.assertIn("linear attention (grid) (d=32), DeltaNet (`delta` = `deltanet`) (d=32, beta=0.1) | 35 |",
                      self.text)
        self.assertEqual(len(self.lines), 2 + 1 + 1 + 2 + 3)  # head, rule; recent, overwrite, salient's 2 frames, 3 passes

    def test_words(self):
        words = streams.lead_words(self.points)
        self.assertIn("salient_recall (marked pairs, no memory gated): linear attention (grid) (1 of 1)", words)
        self.assertIn("assoc_recall, passes=1: linear attention (grid) and DeltaNet", words)
        self.assertIn("fewer on 2 of the 3 points", streams.cache_words(self.points))
        self.assertIn("stores more than the cache on salient_recall:gate=all (marked pairs, every memory gated) at noise 0, "
                      "1024 floats (≥64)", streams.cache_words(self.points))

    def test_matching_the_cache_is_said(self):
        rows = [r for r in synthetic() if r["task_spec"].startswith("recent")]
        for w in (8, 16, 32):  # a decay that holds every lag: it matches the cache
            rows += curve_rows("gla:alpha=0.999,phi=proj,nu=1", "d=32,alpha=0.999", 1024, w, [1, 1, 1, 1], d=32)
        _, points = streams.which_table(part_capacities(rows), {}, {})
        self.assertIn("ties the cache (paired ratio interval of n* holding 1) on recent_recall (window W) at noise 0, 1024 floats (≥32)",
                      streams.cache_words(points))

    def test_a_setting_at_an_end_of_its_candidates_gets_a_dagger_but_not_decay_1(self):
        rows = synthetic()
        manifest = {"race_candidates": {"memories": {"retnet": {"gamma": ["1", "0.99", "0.97"]}}}}
        edges = {}
        lines, _ = streams.which_table(part_capacities(rows), manifest, edges)
        self.assertIn("gamma=0.97†", "\n".join(lines))
        self.assertIn("the lowest", streams.edge_words(edges))
        rows = [dict(r, memory_spec=r["memory_spec"].replace("0.97", "1"), tuned=r["tuned"].replace("0.97", "1"))
                for r in rows]
        lines, _ = streams.which_table(part_capacities(rows), manifest, {})
        self.assertIn("gamma=1)", "\n".join(lines))


class Section(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memcap-streams-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_no_study_no_section(self):
        self.assertEqual(streams.section(self.tmp), [])
        self.assertEqual(streams.section("/nonexistent"), [])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "figures")))

    def test_a_synthetic_study(self):
        write_summary(os.path.join(self.tmp, "streams", "streams_summary.csv"), synthetic())
        text = "\n".join(streams.section(self.tmp))
        self.assertIn("## Where decays, overwrites and gates pay", text)
        self.assertIn("The longest horizon of a fixed state: noise 0 at 1024 floats, RetNet (24; the cache ≥32)", text)
        self.assertIn("![recall against lag at the largest window](figures/streams_lag.png)", text)
        self.assertTrue(os.path.getsize(os.path.join(self.tmp, "figures", "streams_lag.png")) > 0)

    def test_the_fixture(self):
        figures = os.path.join(self.tmp, "figures")
        lines = streams.section(FIXTURES, figures)
        text = "\n".join(lines)
        self.assertTrue(text.startswith("## Where decays, overwrites and gates pay"))
        for head in ("### Which memory when", "### The horizon of a fixed state (recent_recall)",
                     "### Overwrites (overwrite_recall)", "### Writing the pairs again (assoc_recall:passes)"):
            self.assertIn(head, lines)
        self.assertTrue(os.path.getsize(os.path.join(figures, "streams_lag.png")) > 0)
        # a row of "which memory when" per task (overwrite: both slots together), budget and noise in the CSV
        with open(os.path.join(FIXTURES, "streams", "streams_summary.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        want = set()
        for r in rows:
            task = common.base(r["task_spec"])
            name = {"recent_recall": "recent_recall (window W)", "overwrite_recall": "overwrite_recall (rewritten and untouched keys)",
                    "salient_recall": "salient_recall (marked pairs, no memory gated)"}.get(task)
            if task == "salient_recall" and "gate" in common.spec_params(r["task_spec"]):
                name = "salient_recall:gate=all (marked pairs, every memory gated)"
            if task == "assoc_recall":
                name = "assoc_recall, passes=" + capacity.passes(r["task_spec"])  # once: passes left out, named 1
            want.add((name, common.noise_words(common.noise_key(r["task_spec"])), r["budget_floats"]))
        start = lines.index("### Which memory when")
        table = [l for l in lines[start:lines.index("", lines.index("| task | noise | floats | stores the most "
                                                                       "(fixed state; all when tied) | capacity | "
                                                                       "cache (softmax) | against the cache |"))]
                 if l.startswith("| ") and not l.startswith("| task ")]
        got = {tuple(c.strip() for c in l.strip("|").split("|")[:3]) for l in table}
        self.assertEqual(len(table), len(want))
        self.assertEqual(got, want)
        self.assertEqual(len(want), 22)  # 4 recent, 4 overwrite, 8 salient (two frames), 6 passes
        # the gate table: each memory in both frames; the README's words computed from it
        self.assertIn("### What a gate buys (salient_recall)", lines)
        self.assertIn("Gating every memory's writes raises its n* in marked pairs (the paired ratio interval above 1) at ", text)
        self.assertNotIn("nan", text)

    def test_in_the_whole_report(self):
        d = os.path.join(self.tmp, "reports")
        shutil.copytree(SWEEP, d)
        shutil.copytree(os.path.join(FIXTURES, "streams"), os.path.join(d, "streams"))
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report.py"), d], capture_output=True,
                           text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "REPORT.md")) as f:
            text = f.read()
        self.assertIn("## Where decays, overwrites and gates pay", text)
        self.assertTrue(os.path.exists(os.path.join(d, "figures", "streams_lag.png")))
        # its README from the template, every {{key}} computed: the which-memory-when table from the CSV
        with open(os.path.join(d, "streams", "README.md")) as f:
            readme = f.read()
        self.assertNotIn("{{", readme)
        self.assertIn("| task | noise | ", readme)
        self.assertIn("| recent_recall (window W) | ", readme)


class GenericLagFigure(unittest.TestCase):
    def test_memcap_report_draws_recall_against_lag(self):
        tmp = tempfile.mkdtemp(prefix="memcap-streams-test-")
        path_was = os.environ.get("PATH", "")
        binary_was = os.environ.get("MEMCAP_BINARY")
        try:
            os.environ["PATH"], os.environ["MEMCAP_BINARY"] = "/usr/bin:/bin", ""  # no theory
            write_summary(os.path.join(tmp, "s_summary.csv"), synthetic())
            out = sweep.build(os.path.join(tmp, "s_summary.csv"), os.path.join(tmp, "rep"))
            self.assertTrue(os.path.exists(os.path.join(out, "figures", "lag_recent_recall_cosine_1.png")))
            self.assertTrue(os.path.exists(os.path.join(out, "figures", "frontier_assoc_recall_passes_2.png")))
            with open(os.path.join(out, "report.md")) as f:
                md = f.read()
            self.assertIn("separate rows, named by it (salient_recall:gate=all)", md)  # the first variant in the rows
            self.assertIn("| assoc_recall:passes=2 |", md)
            self.assertIn("| salient_recall:gate=all | cosine=1 |", md)  # the frames are not merged
            self.assertIn("| overwrite_recall (rewritten) |", md)
        finally:
            os.environ["PATH"] = path_was
            if binary_was is None:
                os.environ.pop("MEMCAP_BINARY", None)
            else:
                os.environ["MEMCAP_BINARY"] = binary_was
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main()


class OverwriteBoth(unittest.TestCase):
    """overwrite_recall is ranked on both slots at once: forgetting the untouched keys is not rewarded."""

    def row(self, memory, slot, n, acc):
        return {"memory_spec": memory, "tuned": "", "task_spec": "overwrite_recall:rewrite=0.25,queries=64,noise=0,cosine=1",
                "readout": "native", "budget_floats": "1024", "n": str(n), "d": "32", "slot": slot,
                "accuracy_mean_frac": str(acc), "accuracy_se_frac": "0.01"}

    def test_a_window_holding_only_the_rewrites_is_not_credited(self):
        rewritten = [self.row("softmax:beta=4", "1", n, 1.0) for n in (16, 32, 64)]
        untouched = [self.row("softmax:beta=4", "0", n, a) for n, a in ((16, 0.95), (32, 0.5), (64, 0.0))]
        both = overwrite_both(rewritten, untouched)
        self.assertEqual([float(r["accuracy_mean_frac"]) for r in both], [0.95, 0.5, 0.0])
        self.assertEqual(common.capacity([(int(r["n"]), float(r["accuracy_mean_frac"])) for r in both]), 16)
        # rewrite = 1: no untouched keys, the rewritten row stands
        self.assertEqual(float(overwrite_both(rewritten[:1], [])[0]["accuracy_mean_frac"]), 1.0)


class Gate(unittest.TestCase):
    """What a gate buys: each memory with no memory gated and with every memory gated, intervals judged at ± 2 SE."""

    def row(self, memory, n, acc, se_, gated):
        return {"memory_spec": memory, "tuned": "", "task_spec": (GATED if gated else SALIENT) % "1",
                "readout": "native", "budget_floats": "1024", "n": str(n), "d": "32", "slot": "",
                "accuracy_mean_frac": str(acc), "accuracy_se_frac": str(se_), "accuracy_ci95_lo_frac": "",
                "accuracy_ci95_hi_frac": ""}

    def test_apart_and_overlapping(self):
        for ungated, apart in ((0.85, False), (0.5, True)):
            rows = [self.row("linear", 16, 1.0, 0.01, True), self.row("linear", 32, 0.95, 0.03, True),
                    self.row("linear", 16, 0.92, 0.02, False), self.row("linear", 32, ungated, 0.03, False)]
            caps = part_capacities(rows)
            lines, pairs = streams.gate_table(caps, rows)
            self.assertEqual(len(pairs), 1)
            m, noise, b, (ur, gr), is_apart = pairs[0]
            self.assertEqual((m, ur["capacity"], gr["capacity"]), ("linear", 16, 32))
            self.assertEqual(is_apart, apart)  # 0.95 - 0.06 against 0.85 + 0.06 overlaps; against 0.5 + 0.06 it is apart
            self.assertIn("apart" if apart else "overlap", lines[-1])
            # the ungated n* interpolated in log n between 16 (0.92) and 32: 16·2^(0.02/0.07) = 19.5 against
            # 0.85, 16·2^(0.02/0.42) = 16.5 against 0.5; the gated passes the largest n tried: a lower bound
            want = {0.85: ("20", "1.64"), 0.5: ("17", "1.94")}[ungated]
            self.assertIn("| %s / ≥32 | ≥×%s |" % want, lines[-1])
            words = streams.gate_words(pairs, caps)
            self.assertIn("at 1 of 1 (memory, noise, budget) points, with accuracy intervals apart (± 2 SE at the gated "
                          "capacity) at %d of them; gated ÷ ungated: linear attention (grid) ≥×%s." % (
                              1 if apart else 0, want[1]), words)

    def test_the_synthetic_study(self):
        caps = part_capacities(synthetic())
        lines, pairs = streams.gate_table(caps, synthetic())
        text = "\n".join(lines)
        self.assertIn("| linear attention (grid) | noise 0 | 1024 | 17 / ≥64 | ≥×3.79 |", text)  # gated passes the largest n
        self.assertIn("| 17 / 36 | ×2.10 |", text)  # the cache: its window then holds marked pairs only
        words = streams.gate_words(pairs, caps)
        self.assertIn("ties its assoc_recall n* (the unpaired ratio interval holds 1) at 0 of the 1 points measured on both "
                      "(linear attention (grid) at noise 0, 1024 floats: ≥64 against 35 differ)", words)  # the cache has no assoc_recall rows
        said = streams.readme_salient(caps, synthetic())
        self.assertIn("with no memory gated, linear attention leads the fixed states (at 1 of 1 points) and the best fixed "
                      "state stores, against the cache, fewer at 1 of 1", said)  # 17 against 17 rounded; no per-seed rows, no interval
        self.assertIn("with every memory gated, linear attention leads the fixed states (at 1 of 1 points) and the best "
                      "fixed state stores, against the cache, more at 1 of 1", said)
        self.assertIn("Gating multiplies the marked pairs stored by softmax cache ×2.10; linear attention ≥×3.79", said)
        self.assertIn("n* ties its assoc_recall n* at 0 of 1 points", said)

    def test_one_frame_no_table(self):
        rows = [self.row("linear", 16, 1.0, 0.01, False)]
        self.assertEqual(streams.gate_table(part_capacities(rows), rows), ([], []))
