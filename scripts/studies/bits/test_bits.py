"""The section on budgets in bits (scripts/studies/bits/section.py) on small synthetic summaries: the log2(n!)
limit's pinned values, capacity, bits per pair and the fraction of the limit, HRR's best block, the ranking
against the float frontier both ways, the choices at an end of their candidates, and a bits summary without
state_bits refused (exit status 2, nothing written).

    /usr/bin/python3 -m unittest discover -s scripts/studies -t scripts
"""
import csv
import json
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

from memcap_report import common  # noqa: E402
from studies.bits import section as bits  # noqa: E402
from memcap_report.common import SUMMARY_COLUMNS, ReportError  # noqa: E402
from memcap_report.common import read_catalog  # noqa: E402

# names, capacity axes and slots from memcap's tables (memcap list --json), as a reports directory has them
read_catalog(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "tests", "report", "fixtures", "sweep"))

TASK = "assoc_recall:queries=32,noise=0,cosine=%s,control=none,vocab=0,keys=random,steps=1000,lr=0.01,temp=0.1"
NS = (4, 8, 16, 32, 64, 128)
MANIFEST = {"race_candidates": {"memories": {"softmax": {"beta": ["1", "64", "1024"],
                                                         "precision": list(bits.PRECISIONS)}}},
            "config": {"blocks": [{"memories": ["softmax:beta=best,precision=best"], "d": "best"},
                                  {"memories": ["linear:phi=proj,nu=1,precision=best"], "d": "best:4,8,16,32"},
                                  {"memories": ["hrr"], "d": "best:256"},
                                  {"memories": ["hrr:precision=int8"], "d": "best:908"}]}}


def row(spec, tuned, d, cosine, floats, n, acc, state_bits=None, se=0.01):
    r = {c: "" for c in SUMMARY_COLUMNS}
    r.update(memory=spec.split(":")[0], memory_spec=spec, task_spec=TASK % cosine, readout="auto:train=2000,ridge=1e-06",
             budget_floats=str(floats), state_floats=str(floats), d=str(d), n=str(n), seeds="10", errors="0",
             queries="320", accuracy_mean_frac=str(acc), accuracy_se_frac=str(se), tuned=tuned)
    if state_bits is not None:
        r["state_bits"] = str(state_bits)
    return r


def along(spec, tuned, d, cosine, floats, cap, state_bits=None, per_pair=None):
    """Rows over NS whose capacity is `cap` (0.95 up to it, 0.5 beyond); state bits fixed or per pair."""
    out = []
    for n in NS:
        sb = per_pair * n if per_pair else state_bits
        r = row(spec, tuned, d, cosine, floats, n, 0.95 if n <= cap else 0.5, sb)
        if per_pair:
            r["state_floats"] = str(2 * d * n)
        out.append(r)
    return out


def bits_summary(linear_cap=16):
    """At 8192 bits (256 floats), noise 0: the cache 64 (int4, d=4, beta=1024, 96 bits a pair), the linear grid
    `linear_cap` (int8, d=16), HRR 8 at fp32 and 16 at int8 (its blocks); at cosine 0.72: the cache 16, the grid
    8, HRR 8 and 4."""
    rows = []
    for cosine, (c_soft, c_hrr32, c_hrr8, c_lin) in (("1", (64, 8, 16, linear_cap)), ("0.72", (16, 8, 4, 8))):
        rows += along("softmax:beta=1024,precision=int4", "d=4,beta=1024,precision=int4", 4, cosine, 256, c_soft,
                      per_pair=96)
        rows += along("linear:phi=proj,nu=1,precision=int8", "d=16,precision=int8", 16, cosine, 256, c_lin,
                      state_bits=8190)
        rows += along("hrr", "d=256", 256, cosine, 256, c_hrr32, state_bits=8192)
        rows += along("hrr:precision=int8", "d=908", 908, cosine, 256, c_hrr8, state_bits=8172)
    return rows


def float_summary():
    """The float frontier at 256 floats (no state_bits: fp32), noise 0: the cache 32, the grid 8, HRR 16."""
    rows = []
    for cosine, (c_soft, c_lin, c_hrr) in (("1", (32, 8, 16)), ("0.72", (8, 4, 8))):
        rows += along("softmax:beta=1024", "d=4,beta=1024", 4, cosine, 256, c_soft)
        rows += along("linear:phi=proj,nu=1", "d=16", 16, cosine, 256, c_lin)
        rows += along("hrr", "d=256", 256, cosine, 256, c_hrr)
    return rows  # row() adds no state_bits column without a value


def per_seed_rows(summary):
    """10 per-seed rows for each summary row, their mean its mean: seeds 0..9, accuracies spread ±0.05 in turn."""
    out = []
    for r in summary:
        m = float(r["accuracy_mean_frac"])
        for s in range(10):
            out.append(dict(r, seed=str(s), accuracy_frac=str(m + (0.05 if s % 2 else -0.05) * (s % 5) / 4),
                            status="ok"))
    return out


def crossing_key(r):
    from memcap_report import crossing
    return crossing.key_of(r)


def write(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


class Limit(unittest.TestCase):
    def test_the_limit_is_pinned(self):
        # memories/theory/information.hpp's values (tests/test_precision.cpp)
        self.assertEqual(common.max_pairs_exact(8192), 966)
        self.assertEqual(common.max_pairs_exact(131072), 10944)
        self.assertEqual(common.max_pairs_exact(33554432), 1739680)
        for b in (100, 8192, 1e6):
            n = common.max_pairs_exact(b)
            self.assertLessEqual(common.log2_factorial(n), b)
            self.assertGreater(common.log2_factorial(n + 1), b)
        self.assertAlmostEqual(common.log2_factorial(10), 21.791061114716953, places=9)  # log2 3628800
        self.assertEqual(common.max_pairs_exact(-1), 0)

    def test_state_bits_fall_back_to_32_a_float(self):
        self.assertEqual(common.state_bits_of({"state_bits": "96", "state_floats": "8"}), 96)
        self.assertEqual(common.state_bits_of({"state_floats": "8"}), 256)
        self.assertEqual(common.state_bits_of({"state_bits": "", "state_floats": "8"}), 256)


# n* of along()'s rows: 0.95 at the capacity, 0.5 at twice it, so 0.9 is crossed 1/9 of the way up in log n
def star(cap):
    return cap * 2 ** (0.05 / 0.45)


class Capacities(unittest.TestCase):
    def test_capacity_bits_per_pair_and_fraction_of_the_limit(self):
        caps, every = bits.capacities(bits_summary())
        c = caps[("softmax", "cosine=1", 8192)]
        self.assertEqual((c["capacity"], c["precision"], c["d"], c["state_bits"]), (64, "int4", 4, 64 * 96))
        self.assertAlmostEqual(c["nstar"], star(64))
        self.assertEqual(c["bits_per_pair"], 96)  # a cache's state grows a row a pair: its bits per row
        self.assertAlmostEqual(c["fraction"], star(64) / 966)
        self.assertEqual(c["settings"], [("beta", "1024")])
        lin = caps[("linear", "cosine=1", 8192)]
        self.assertAlmostEqual(lin["bits_per_pair"], 8190 / star(16))  # a fixed state over the n* pairs it holds
        self.assertEqual(lin["precision"], "int8")
        text = bits.cell_text(c)
        self.assertIn("**%d** (int4, d=4, β=1024) · 6144 · 96 · %.3g%% · 0.950 ± 0.010 at 64" % (
            round(star(64)), 100 * star(64) / 966), text)

    def test_hrr_takes_its_best_block_marked(self):
        caps, every = bits.capacities(bits_summary())
        h = caps[("hrr", "cosine=1", 8192)]
        self.assertEqual((h["capacity"], h["precision"], h["picked_from"]), (16, "int8", 2))
        self.assertEqual(caps[("hrr", "cosine=0.72", 8192)]["precision"], "fp32")  # 8 at fp32 against 4
        self.assertIn("**%d**‡ (int8, d=908)" % round(star(16)), bits.cell_text(h))
        table = "\n".join(bits.blocks_table(every))
        self.assertIn("| HRR | `hrr` | %.1f (d=256; 0.950 ± 0.010 at 8) |" % star(8), table)
        self.assertIn("**%d (d=908; 0.950 ± 0.010 at 16)**" % round(star(16)), table)

    def test_intervals_come_from_the_studys_own_per_seed_rows(self):
        # Per-seed rows in bits/bits.csv give each n* an interval; the same cells in the report's global
        # index (another sweep's seeds of a shared cell) are not read.
        from memcap_report import crossing
        rows = bits_summary()
        tmp = tempfile.mkdtemp(prefix="memcap-bits-seeds-")
        self.addCleanup(shutil.rmtree, tmp)
        write(os.path.join(tmp, "bits", "bits.csv"), per_seed_rows(rows))
        index, floats = bits.read_seed_index(tmp)
        self.assertEqual(floats, {})
        self.assertEqual(len(index), len(rows))
        caps, _ = bits.capacities(rows, seeds=index)
        c = caps[("softmax", "cosine=1", 8192)]
        self.assertIsNotNone(c["est"].lo)
        self.assertLessEqual(c["est"].lo, c["nstar"])
        self.assertGreaterEqual(c["est"].hi, c["nstar"])
        self.assertRegex(bits.cell_text(c), r"^\*\*69 \[\d+, \d+\]\*\*")
        # without an index: no interval, whatever the global one holds
        crossing.SEEDS.update(index)
        self.addCleanup(crossing.reset_seeds)
        self.assertIsNone(bits.capacities(rows)[0][("softmax", "cosine=1", 8192)]["est"].lo)

    def test_a_tie_is_an_interval_holding_one(self):
        # The linear grid and HRR at int8 read alike on the same seeds (16 each without noise): tied, one
        # group; the cache's 64 is apart from both.
        rows = bits_summary()
        index = {}
        for r in per_seed_rows(rows):
            k = crossing_key(r)
            s, a = index.setdefault(k, ([], []))
            s.append(int(r["seed"]))
            a.append(float(r["accuracy_frac"]))
        caps, _ = bits.capacities(rows, seeds=index)
        lin, hrr, soft = (caps[(m, "cosine=1", 8192)] for m in ("linear", "hrr", "softmax"))
        self.assertTrue(bits.tied(lin, hrr))
        self.assertFalse(bits.tied(soft, lin))
        groups = bits.order_groups(caps, ["softmax", "linear", "hrr"], "cosine=1", 8192)
        self.assertEqual([[m for m, _ in g] for g in groups], [["softmax"], ["linear", "hrr"]])
        self.assertEqual(bits.relation(soft, lin), 1)
        self.assertEqual(bits.relation(lin, hrr), 0)

    def test_a_point_with_one_block_is_no_pick(self):
        rows = [r for r in bits_summary() if not (r["memory_spec"] == "hrr:precision=int8" and r["task_spec"] == TASK % "0.72")]
        caps, _ = bits.capacities(rows)
        self.assertIsNone(caps[("hrr", "cosine=0.72", 8192)]["picked_from"])
        self.assertEqual(bits.single(caps, ["hrr"]), "; at 8192 bits HRR has one block, `hrr` (no pick there)")
        self.assertEqual(bits.single(bits.capacities(bits_summary())[0], ["hrr"]), "")

    def test_the_limit_is_its_own_row(self):
        lines, _ = bits.tables(bits.capacities(bits_summary())[0], {})
        self.assertIn("| *log2(n!) limit* | *966* · 8192 · 8.5 · 100% |", lines)

    def test_float_frontier_is_priced_at_32_bits_a_float(self):
        caps, _ = bits.capacities(float_summary())
        c = caps[("softmax", "cosine=1", 8192)]
        self.assertEqual((c["capacity"], c["precision"], c["state_bits"]), (32, "fp32", 32 * 256))


class Ranking(unittest.TestCase):
    def words(self, linear_cap):
        b, _ = bits.capacities(bits_summary(linear_cap))
        f, _ = bits.capacities(float_summary())
        lines, tally = bits.ranking(b, f)
        return "\n".join(lines), bits.ranking_verdict(tally), bits.gains(b, f)

    def test_the_same_leader(self):
        lines, verdict, gains = self.words(16)
        self.assertIn("in bits the softmax cache leads with 69 (int4, d=4), ×4.00 the next", lines)
        self.assertIn("in floats (fp32) the softmax cache led with 35 (d=4), ×2.00 the next (HRR, 17 (d=256))", lines)
        self.assertIn("the linear grid is tied with HRR (in floats behind it)", lines)
        self.assertIn("Without noise, the order of the memories by n* (tied where the paired interval of their ratio "
                      "holds 1) is the same in bits as in floats at 0 of 1 budgets, the leader at 1 of 1", verdict)
        self.assertIn("the softmax cache ×2.00 at 8192 bits (35 → 69)", gains)

    def test_another_leader_under_bits_changes_the_words(self):
        lines, verdict, _ = self.words(128)
        # 128 is the largest n tried: a bound, and so is the ratio
        self.assertIn("in bits the linear grid leads with ≥128 (int8, d=16), ≥×1.85 the next (the softmax cache, 69 "
                      "(int4, d=4))", lines)
        self.assertIn("the softmax cache is behind the linear grid (in floats ahead of it)", lines)
        self.assertIn("the leader at 0 of 1", verdict)

    def test_a_budget_with_one_memory_in_bits_is_no_comparison(self):
        rows = bits_summary() + [dict(r, budget_floats="65536") for r in bits_summary() if r["memory"] == "softmax"]
        floats = float_summary() + [dict(r, budget_floats="65536") for r in float_summary()]
        caps, _ = bits.capacities(rows)
        fcaps, _ = bits.capacities(floats)
        lines, tally = bits.ranking(caps, fcaps)
        self.assertNotIn("2097152 bits", "\n".join(lines))
        self.assertEqual([k for k, _, _ in tally.values()], [1, 1])

    def test_a_float_point_at_a_fixed_setting_is_not_compared(self):
        # the float frontier's cache at 256 floats without its β raced: no measure of what precision changes
        floats = [dict(r, tuned="d=4") if r["memory"] == "softmax" else r for r in float_summary()]
        caps, _ = bits.capacities(bits_summary())
        fcaps = bits.comparable(caps, bits.capacities(floats)[0])
        self.assertEqual(sorted({m for m, _, _ in fcaps}), ["hrr", "linear"])
        self.assertNotIn("softmax", bits.gains(caps, fcaps))
        self.assertEqual(len(bits.comparable(caps, bits.capacities(float_summary())[0])), 6)

    def test_an_unchanged_order_says_so(self):
        b, _ = bits.capacities(bits_summary(16))
        lines, tally = bits.ranking(b, b)
        self.assertIn("the same order", "\n".join(lines))
        self.assertIn("at 1 of 1 budgets, the leader at 1 of 1", bits.ranking_verdict(tally))


class Edges(unittest.TestCase):
    def test_an_edge_winner_is_flagged(self):
        caps, _ = bits.capacities(bits_summary())
        lines, edges = bits.tables(caps, MANIFEST)
        text = "\n".join(lines)
        self.assertIn("(int4†, d=4†, β=1024†)", text)
        self.assertIn("(int8, d=16)", text)  # inside every grid
        words = bits.edge_words(edges, caps)
        self.assertIn("the softmax cache: β = 1024 (the highest candidate) at all 2 of its capacity points", words)
        self.assertIn("d = 4 (the narrowest width raced)", words)
        self.assertIn("precision = int4 (the lowest precision raced)", words)
        self.assertIn("lower bound", words)
        self.assertEqual(bits.edge_words({}), "")

    def test_the_widest_width_of_a_listed_race_is_flagged(self):
        caps, _ = bits.capacities(bits_summary())
        manifest = {"config": {"blocks": [{"memories": ["linear:phi=proj,nu=1,precision=best"], "d": "best:4,8,16"}]}}
        lines, edges = bits.tables(caps, manifest)
        self.assertIn("(int8, d=16†)", "\n".join(lines))
        self.assertIn("d = 16 (the widest width raced)", bits.edge_words(edges, caps))

    def test_each_block_flags_the_ends_of_its_own_widths(self):
        # The same linear grid at two budgets: at 8192 bits its block races 4..32 (d = 16 inside), at 32768
        # bits a block races 16..64 only (d = 16 at its narrow end).
        rows = bits_summary()
        rows += [dict(r, budget_floats="1024") for r in rows if r["memory"] == "linear"]
        caps, _ = bits.capacities(rows)
        manifest = {"config": {"blocks": [
            {"memories": ["linear:phi=proj,nu=1,precision=best"], "d": "best:4,8,16,32", "budgets_floats": [256]},
            {"memories": ["linear:phi=proj,nu=1,precision=best"], "d": "best:16,32,64", "budgets_floats": [1024]}]}}
        _, edges = bits.tables(caps, manifest)
        self.assertEqual(dict(edges[("linear", "d", "16", "narrowest")]), {"cosine=1": [32768], "cosine=0.72": [32768]})
        self.assertEqual(bits.raced_words(bits.width_candidates(manifest)),
                         ["the linear grid 4–32 at 8192 bits, 16–64 at 32768 bits"])
        self.assertEqual(bits.raced_words(bits.width_candidates(MANIFEST)),
                         ["the softmax cache from 4 up to what the budget holds", "the linear grid 4–32"])

    def test_the_narrowest_default_width_is_the_manifests(self):
        # A manifest that states its default widths (race_candidates.widths) sets where d = best starts;
        # one that does not is read as the lists before they went down to 2 (from 4).
        stated = dict(MANIFEST, race_candidates=dict(MANIFEST["race_candidates"], widths=(
            "d = best: powers of two from 2 up to the budget, each the memory can be built with there")))
        self.assertEqual(bits.narrowest(stated), 2)
        self.assertEqual(bits.narrowest(MANIFEST), 4)
        self.assertEqual(bits.raced_words(bits.width_candidates(stated))[0], "the softmax cache from 2 up to what the budget holds")

    def test_the_ends_of_a_listed_race_are_its_own(self):
        # A block that lists the cache's candidates (beta=best:256/1024, precision=best:int8/int4): β = 1024 is its
        # highest; int4 its lowest precision. Listing int4/int8 for the grid makes its int8 the highest raced.
        caps, _ = bits.capacities(bits_summary())
        manifest = dict(MANIFEST, config={"blocks": [
            {"memories": ["softmax:beta=best:256/1024,precision=best:int8/int4"], "d": "best:4,8"},
            {"memories": ["linear:phi=proj,nu=1,precision=best:int4/int8"], "d": "best:8,16,32"}]})
        self.assertEqual(bits.listed_candidates(manifest, "softmax", 8192),
                         {"beta": ["256", "1024"], "precision": ["int8", "int4"]})
        _, edges = bits.tables(caps, manifest)
        self.assertIn(("softmax", "β", "1024", "highest"), edges)
        self.assertIn(("softmax", "precision", "int4", "lowest"), edges)
        self.assertIn(("linear", "precision", "int8", "highest"), edges)
        self.assertIn("precision = int8 (the highest precision raced)", bits.edge_words(edges, caps))
        # The same choices inside wider lists are not flagged.
        manifest = dict(MANIFEST, config={"blocks": [
            {"memories": ["softmax:beta=best:256/1024/4096,precision=best"], "d": "best:2,4,8"},
            {"memories": ["linear:phi=proj,nu=1,precision=best:fp32/int8/int4"], "d": "best:8,16,32"}]})
        _, edges = bits.tables(caps, manifest)
        self.assertEqual([k for k in edges if k[1] in ("β", "precision") and k[2] != "int4"], [])

    def test_a_natural_width_is_not_flagged(self):
        rows = [dict(r, d="4", tuned="d=4") for r in bits_summary() if r["memory_spec"] == "hrr"]
        caps, _ = bits.capacities(rows)
        _, edges = bits.tables(caps, MANIFEST)  # hrr's block is d = best:256: its width is not raced
        self.assertEqual(edges, {})
        _, edges = bits.tables(caps, {})  # without the manifest: tuned names d, so it counts as raced
        self.assertIn(("hrr", "d", "4", "narrowest"), edges)


class Section(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memcap-bits-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_no_study_no_section(self):
        self.assertEqual(bits.section("/nonexistent", self.tmp), [])

    def test_section_and_figure(self):
        write(os.path.join(self.tmp, "bits", "bits_summary.csv"), bits_summary())
        write(os.path.join(self.tmp, "capacity_summary.csv"), float_summary())
        os.makedirs(os.path.join(self.tmp, "figures"))
        text = "\n".join(bits.section(self.tmp, os.path.join(self.tmp, "figures")))
        self.assertIn("## Budgets in bits", text)
        self.assertIn("![capacity against state bits](figures/bits_frontier.png)", text)
        self.assertIn("chosen on the scored seeds", text)
        self.assertIn("a loose one", text)
        self.assertIn("the softmax cache: int4 at all 2 of its capacity points", text)
        self.assertTrue(os.path.getsize(os.path.join(self.tmp, "figures", "bits_frontier.png")) > 0)

    def test_the_large_budgets_join_from_their_own_sweep(self):
        write(os.path.join(self.tmp, "bits", "bits_summary.csv"), bits_summary())
        large = [dict(r, budget_floats="65536") for r in bits_summary() if r["memory"] == "softmax"]
        write(os.path.join(self.tmp, "bits", "bits_large_summary.csv"), large)
        write(os.path.join(self.tmp, "capacity_summary.csv"), float_summary())
        os.makedirs(os.path.join(self.tmp, "figures"))
        text = "\n".join(bits.section(self.tmp, os.path.join(self.tmp, "figures")))
        self.assertIn("| memory | 8192 bits (256 floats) | 2097152 bits (65536 floats) |", text)
        self.assertIn("`scripts/studies/bits/bits.ini` and `scripts/studies/bits/bits_large.ini`", text)
        rows, _, manifest = bits.read(self.tmp)
        self.assertEqual(len(rows), len(bits_summary()) + len(large))
        self.assertEqual(manifest["sweeps"], ["bits.ini", "bits_large.ini"])

    def test_a_later_sweep_replaces_a_memory_at_a_budget(self):
        # bits_wider races the linear grid at 256 floats again over other widths: its rows and its block replace
        # the earlier ones there; the cache and HRR stay; the earlier block keeps its other memories.
        write(os.path.join(self.tmp, "bits", "bits_summary.csv"), bits_summary())
        with open(os.path.join(self.tmp, "bits", "bits.csv.manifest.json"), "w") as f:
            json.dump(dict(MANIFEST, config={"blocks": [
                {"memories": ["softmax:beta=best,precision=best", "linear:phi=proj,nu=1,precision=best"],
                 "d": "best:4,8,16", "budgets_floats": [256, 1024]}]}), f)
        wider = [dict(r, tuned="d=64,precision=int8", d="64", memory_spec="linear:phi=proj,nu=1,precision=int4")
                 for r in bits_summary() if r["memory"] == "linear"]
        write(os.path.join(self.tmp, "bits", "bits_wider_summary.csv"), wider)
        with open(os.path.join(self.tmp, "bits", "bits_wider.csv.manifest.json"), "w") as f:
            json.dump({"config": {"blocks": [{"memories": ["linear:phi=proj,nu=1,precision=best:int8/int4"],
                                              "d": "best:16,32,64", "budgets_floats": [256]}]}}, f)
        rows, _, manifest = bits.read(self.tmp)
        self.assertEqual(manifest["sweeps"], ["bits.ini", "bits_wider.ini"])
        self.assertEqual(sorted({r["d"] for r in rows if r["memory"] == "linear"}), ["64"])
        self.assertEqual(len(rows), len(bits_summary()))
        blocks = manifest["config"]["blocks"]
        self.assertEqual([(b["memories"], b["budgets_floats"]) for b in blocks], [
            (["softmax:beta=best,precision=best"], [256]),
            (["softmax:beta=best,precision=best", "linear:phi=proj,nu=1,precision=best"], [1024]),
            (["linear:phi=proj,nu=1,precision=best:int8/int4"], [256])])
        self.assertEqual(bits.width_span(bits.width_candidates(manifest), "linear", 8192), (16, 64))
        self.assertEqual(bits.listed_candidates(manifest, "linear", 8192), {"precision": ["int8", "int4"]})
        self.assertEqual(bits.listed_candidates(manifest, "linear", 32768), {})
        text = "\n".join(bits.section(self.tmp, self.tmp))
        self.assertIn("`scripts/studies/bits/bits.ini` and `scripts/studies/bits/bits_wider.ini`", text)

    def test_a_bits_summary_without_state_bits_is_refused(self):
        rows = bits_summary()
        for r in rows:
            del r["state_bits"]
        write(os.path.join(self.tmp, "bits", "bits_summary.csv"), rows)
        with self.assertRaises(ReportError) as e:
            bits.section(self.tmp, self.tmp)
        self.assertIn("state_bits", str(e.exception))

    def test_the_command_exits_2_and_writes_nothing(self):
        sweep = os.path.join(self.tmp, "sweep")
        shutil.copytree(os.path.join(ROOT, "tests", "report", "fixtures", "sweep"), sweep)
        rows = bits_summary()
        for r in rows:
            del r["state_bits"]
        write(os.path.join(sweep, "bits", "bits_summary.csv"), rows)
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report.py"), sweep], capture_output=True,
                           text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        self.assertEqual((p.returncode, p.stderr.count("\n")), (2, 1), p.stderr)
        self.assertIn("no column 'state_bits'", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(sweep, "REPORT.md")))


if __name__ == "__main__":
    unittest.main()
