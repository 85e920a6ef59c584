"""Capacity as a crossing (scripts/memcap_report/crossing.py) on synthetic curves whose answer is known:
the interpolation in log n, the bootstrap interval, paired against unpaired ratios, a refined sweep's
uneven seeds (probes between powers of two, more seeds near the crossing), and byte-identical output."""
import csv
import math
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from memcap_report import capacity, common, crossing, verdict  # noqa: E402

common.read_catalog(os.path.join(HERE, "fixtures", "sweep"))

TASK = "assoc_recall:queries=32,noise=0,cosine=1"


def linear_in_log(n, top=1.3, slope=0.1):
    """Accuracy exactly linear in log2 n: crosses 0.9 at n = 2^((top - 0.9)/slope)."""
    return top - slope * math.log2(n)


def cells(memory, ns, effects, top=1.3, extra=None):
    """(summary rows, seed index) of one curve: seed s reads linear_in_log(n) + effects[s] at every n;
    extra: {n: seeds} measured there besides the first ten."""
    rows, seeds = [], {}
    for n in ns:
        ss = list(range(10)) + list((extra or {}).get(n, []))
        accs = [linear_in_log(n, top) + effects[s] for s in ss]
        r = dict(memory_spec=memory, task_spec=TASK, readout="native", budget_floats="1024", d="32", n=str(n),
                 slot="", tuned="d=32", accuracy_mean_frac="%.9g" % np.mean(accs), accuracy_se_frac="0",
                 state_floats="1024", seeds=str(len(ss)))
        rows.append(r)
        seeds[crossing.key_of(r)] = (ss, accs)
    return rows, seeds


def effects_of(k, scale=0.02, seed=1):
    return list(np.random.default_rng(seed).normal(0, scale, k))


class Interpolation(unittest.TestCase):
    def test_exact_on_a_curve_linear_in_log_n(self):
        xs = np.array([4.0, 8.0, 32.0, 64.0])
        acc = np.array([[linear_in_log(x) for x in xs]])
        self.assertAlmostEqual(crossing.crossing(xs, acc, 0.9)[0], 16.0, places=9)
        # 0.99: between 4 (1.1) and 8 (1.0): 2^((1.3-0.99)/0.1) = 2^3.1
        self.assertAlmostEqual(crossing.crossing(xs, acc, 0.99)[0], 2 ** 3.1, places=9)

    def test_bounds_outside_the_tried_range(self):
        xs = np.array([4.0, 8.0, 16.0])
        self.assertEqual(crossing.crossing(xs, np.array([[1, 1, 0.95]]), 0.9)[0], math.inf)
        self.assertEqual(crossing.crossing(xs, np.array([[0.5, 0.4, 0.3]]), 0.9)[0], -math.inf)
        e = crossing.Estimate(math.inf, None, None, 4, 16)
        self.assertEqual(crossing.fmt_est(e), "≥16")
        self.assertEqual(crossing.fmt_est(crossing.Estimate(-math.inf, None, None, 4, 16)), "<4")

    def test_a_curve_that_is_not_monotone_is_read_at_its_last_downward_crossing(self):
        xs = np.array([4.0, 8.0, 16.0, 32.0])
        v = crossing.crossing(xs, np.array([[1.0, 0.8, 0.95, 0.85]]), 0.9)[0]
        self.assertAlmostEqual(v, 2 ** (4 + 0.5), places=9)  # halfway (in log n) from 16 to 32


class Bootstrap(unittest.TestCase):
    def test_interval_is_the_known_transform_of_the_mean_seed_effect(self):
        # each seed shifts the whole curve by e_s, so a resample's n* is 2^((0.4 + mean e)/0.1): the interval
        # is that transform of the resampled means' percentiles, under the same draws
        eff = effects_of(10)
        rows, seeds = cells("linear", [4, 8, 32, 64], eff)
        (row,), _ = capacity.capacity_rows(rows, "frontier", seeds)
        e = row["nstar"][0.9]
        self.assertAlmostEqual(e.value, 2 ** ((0.4 + np.mean(eff)) / 0.1), delta=1e-5)
        w = crossing.draws(10)
        means = (w @ np.array(eff)) / w.sum(axis=1)
        lo, hi = crossing.percentiles(2 ** ((0.4 + means) / 0.1))
        self.assertAlmostEqual(e.lo, lo, places=6)
        self.assertAlmostEqual(e.hi, hi, places=6)
        self.assertLess(e.lo, e.value)
        self.assertGreater(e.hi, e.value)

    def test_paired_ratio_is_narrower_than_unpaired_on_shared_episodes(self):
        eff = effects_of(10, scale=0.04)
        a, sa = cells("linear", [4, 8, 32, 64], eff, top=1.3)
        b, sb = cells("delta", [4, 8, 32, 64], [x + 0.002 * i for i, x in enumerate(eff)], top=1.25)
        sa.update(sb)
        (ra,), _ = capacity.capacity_rows(a, "frontier", sa)
        (rb,), _ = capacity.capacity_rows(b, "frontier", sa)
        paired = crossing.ratio(ra["curve"], rb["curve"])
        unpaired = crossing.ratio(ra["curve"], rb["curve"], paired=False)
        self.assertAlmostEqual(paired.value, unpaired.value)
        self.assertLess(paired.hi - paired.lo, 0.5 * (unpaired.hi - unpaired.lo))
        self.assertFalse(paired.tie())  # 2^0.5 apart, the shared effects cancel
        self.assertTrue(crossing.ratio(ra["curve"], ra["curve"]).tie())

    def test_a_refined_sweep_with_probes_and_more_seeds_near_the_crossing(self):
        eff = effects_of(40)
        extra = {n: range(10, 40) for n in (8, 12, 20, 32)}
        rows, seeds = cells("linear", [4, 8, 12, 20, 32, 64], eff, extra=extra)
        (row,), _ = capacity.capacity_rows(rows, "frontier", seeds)
        e = row["nstar"][0.9]
        # the probes bracket 16: linear in log n between 12 and 20 is exact on this curve
        self.assertAlmostEqual(e.value, 2 ** ((0.4 + float(np.mean(eff))) / 0.1), delta=1e-4)
        self.assertLess(e.lo, e.value)
        self.assertGreater(e.hi, e.value)
        cells_ = capacity.nstar_cells(row)
        self.assertEqual(cells_[-1], "10-40")  # seeds per n
        # the same curve with ten seeds everywhere is wider
        few, fs = cells("linear", [4, 8, 12, 20, 32, 64], eff)
        (fr,), _ = capacity.capacity_rows(few, "frontier", fs)
        self.assertLess(e.hi - e.lo, fr["nstar"][0.9].hi - fr["nstar"][0.9].lo)

    def test_read_seeds_from_a_per_seed_csv(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cells.csv")
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(list(crossing.KEY_COLUMNS) + ["seed", "accuracy_frac", "status"])
                w.writerow(["linear", TASK, "native", "1024", "32", "12", "", "d=32", "3", "0.5", "ok"])
                w.writerow(["linear", TASK, "native", "1024", "32", "12", "", "d=32", "17", "0.75", "ok"])
                w.writerow(["linear", TASK, "native", "1024", "32", "12", "", "d=32", "18", "", "error"])
            got = crossing.read_seeds(path)
        self.assertEqual(got, {("linear", TASK, "native", "1024", "32", "12", "", "d=32"): ([3, 17], [0.5, 0.75])})


    def test_read_seeds_without_tuned_then_rewritten(self):
        # an older CSV has no "tuned" column: it reads as ""; a file rewritten is parsed again,
        # and each call gives a dict of its own
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cells.csv")
            head = [c for c in crossing.KEY_COLUMNS if c != "tuned"] + ["seed", "accuracy_frac", "status"]

            def write(seeds):
                with open(path, "w", newline="") as f:
                    w = csv.writer(f)
                    w.writerow(head)
                    for s in seeds:
                        w.writerow(["linear", TASK, "native", "1024", "32", "12", "", str(s), "0.5", "ok"])

            key = ("linear", TASK, "native", "1024", "32", "12", "", "")
            write([3, 4])
            first = crossing.read_seeds(path)
            self.assertEqual(first, {key: ([3, 4], [0.5, 0.5])})
            first.clear()
            self.assertEqual(crossing.read_seeds(path), {key: ([3, 4], [0.5, 0.5])})
            write([3, 4, 5])
            self.assertEqual(crossing.read_seeds(path), {key: ([3, 4, 5], [0.5, 0.5, 0.5])})

    def test_spec_params_gives_a_dict_of_its_own(self):
        a = common.spec_params("linear:phi=proj,nu=1")
        self.assertEqual(list(a.items()), [("phi", "proj"), ("nu", "1")])
        a["nu"] = "2"
        self.assertEqual(common.spec_params("linear:phi=proj,nu=1")["nu"], "1")
        self.assertEqual(list(common.spec_params("hrr").items()), [])


class Verdict(unittest.TestCase):
    def plain(self, memory, top, eff):
        rows, seeds = cells(memory, [4, 8, 32, 64], eff, top=top)
        (r,), _ = capacity.capacity_rows(rows, "frontier", seeds)
        return verdict.plain_row(r, "t", "assoc_recall", memory)

    def test_a_tie_is_a_ratio_interval_holding_one(self):
        # two memories 2^0.05 apart in n* with independent seed effects: the paired interval holds 1
        a = self.plain("linear", 1.3, effects_of(10, 0.05, seed=1))
        b = self.plain("delta", 1.295, effects_of(10, 0.05, seed=2))
        line = [l for l in verdict.table([a, b]) if l.startswith("| assoc_recall")][0]
        self.assertIn("(a tie at 1 of 1)", line)
        self.assertIn("(1 of 1)", line)  # the leader, and the runner-up leads too (tied)

    def test_a_margin_outside_one_is_no_tie(self):
        a = self.plain("linear", 1.3, effects_of(10, 0.01, seed=1))
        b = self.plain("delta", 1.2, effects_of(10, 0.01, seed=1))
        line = [l for l in verdict.table([a, b]) if l.startswith("| assoc_recall")][0]
        self.assertNotIn("tie", line)
        r = crossing.ratio(a["curve"], b["curve"])
        self.assertAlmostEqual(r.value, 2.0, places=6)  # 0.1 in accuracy is one doubling of n on this curve
        self.assertIn(crossing.fmt_ratio(r), line)


class Determinism(unittest.TestCase):
    def test_two_runs_are_byte_identical(self):
        code = ("import sys; sys.path.insert(0, %r); sys.path.insert(0, %r); import test_crossing as t; "
                "from memcap_report import capacity; rows, s = t.cells('linear', [4, 8, 12, 20, 32, 64], t.effects_of(40), "
                "extra={12: range(10, 40)}); (r,), _ = capacity.capacity_rows(rows, 'frontier', s); "
                "print(capacity.nstar_cells(r))") % (os.path.join(ROOT, "scripts"), HERE)
        outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
                for _ in range(2)]
        self.assertEqual(outs[0], outs[1])
        self.assertIn("'", outs[0])


if __name__ == "__main__":
    unittest.main()
