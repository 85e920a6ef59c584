"""The Python module's rough edges: an all-error group aggregates, NaN is refused at the door,
a sweep's refusal names memcap.sweep's arguments (not the command line's flags), and the
columns a researcher groups by (memory, tuned, param_floats) are in the rows and the summary."""
import os
import re
import tempfile
import unittest

import numpy as np
import pandas as pd

import memcap
from support import cli


class AllErrorGroups(unittest.TestCase):
    def test_aggregate_of_a_group_holding_only_error_rows(self):
        # noise=1e38 overflows float32: most seeds fail (a non-finite read), every seed at n = 256
        df = memcap.run(memories="softmax", tasks="assoc_recall:noise=1e38", n=[4, 64, 256], seeds=3, progress=False)
        self.assertEqual(df[df.n == 256].status.tolist(), ["error"] * 3)
        s = memcap.aggregate(df)
        self.assertEqual(s.errors.tolist(), (df.status == "error").groupby(df.n).sum().tolist())
        last = s[s.n == 256].iloc[0]
        self.assertEqual(last.errors, 3)
        self.assertTrue(pd.isna(last.state_floats))  # empty in the CSV: nothing ran
        self.assertTrue(pd.isna(last.accuracy_mean_frac))
        # the command line's summary of the same rows agrees
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.csv")
            df.to_csv(path, index=False)
            cli("aggregate", path, "--out", os.path.join(tmp, "s.csv"))
            self.assertEqual(memcap.read_summary_csv(os.path.join(tmp, "s.csv")).errors.tolist(), s.errors.tolist())


class JoinedResults(unittest.TestCase):
    def test_a_cell_and_seed_counts_once(self):
        # frames joined that overlap: rows repeated exactly are counted once, with a warning;
        # rows of one cell and seed that differ are refused, naming the seed and the cell
        df = memcap.run("softmax", "assoc_recall", n=[4, 8], seeds=2, progress=False)
        once = memcap.aggregate(df)
        with self.assertWarnsRegex(UserWarning, r"the DataFrame: 4 rows repeat an earlier row exactly, counted once") \
                as caught:
            twice = memcap.aggregate(pd.concat([df, df], ignore_index=True))
        self.assertNotIn(tempfile.gettempdir(), str(caught.warning))
        pd.testing.assert_frame_equal(twice, once)
        self.assertEqual(twice.seeds.tolist(), [2, 2])
        changed = df.iloc[[1]].copy()
        changed["correct"] += 1
        with self.assertRaisesRegex(memcap.UsageError, r"lines 3 and 6 are both seed 1 of cell softmax:beta=16 \| "
                                                       r"assoc_recall:.* but differ") as refused:
            memcap.aggregate(pd.concat([df, changed], ignore_index=True))
        self.assertNotIn(tempfile.gettempdir(), str(refused.exception))
        # a file holds the same: the warning names it
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "joined.csv")
            pd.concat([df, df.iloc[:1]]).to_csv(path, index=False)
            with self.assertWarnsRegex(UserWarning, re.escape("input '%s': 1 row repeats an earlier row exactly" % path)):
                self.assertEqual(memcap.aggregate(path).seeds.tolist(), [2, 2])


class FiniteInput(unittest.TestCase):
    def test_write_and_read_refuse_nan_and_infinity(self):
        m = memcap.Memory("linear", d=8)
        k = np.ones((2, 8), np.float32)
        bad = k.copy()
        bad[1, 3] = np.nan
        with self.assertRaisesRegex(ValueError, r"write: keys hold NaN at row 1, column 3"):
            m.write(bad, k)
        bad[1, 3] = np.inf
        with self.assertRaisesRegex(ValueError, r"write: values hold an infinity at row 1, column 3"):
            m.write(k, bad)
        with self.assertRaisesRegex(ValueError, r"read: queries hold an infinity"):
            m.read(bad)
        m.write(k, k)  # nothing half-written: the state holds the one good write
        self.assertTrue(np.isfinite(np.asarray(m.read(k))).all())


class SweepMessages(unittest.TestCase):
    def test_an_existing_sweep_names_resume_and_force_as_arguments(self):
        with tempfile.TemporaryDirectory() as tmp:
            config = os.path.join(tmp, "tiny.ini")
            with open(config, "w") as f:
                f.write("[block b]\nmemories = softmax\ntasks = assoc_recall\nn = 4\nseeds = 2\n")
            memcap.sweep(config, out=os.path.join(tmp, "o"), progress=False)
            with self.assertRaises(memcap.UsageError) as caught:
                memcap.sweep(config, out=os.path.join(tmp, "o"), progress=False)
            message = str(caught.exception)
            self.assertIn("pass resume=True", message)
            self.assertIn("force=True", message)
            self.assertNotIn("--", message)


class Columns(unittest.TestCase):
    def test_memory_tuned_and_param_floats(self):
        df = memcap.run(memories=["softmax:beta=best", "linear:phi=proj"], tasks="assoc_recall", n=[4, 16],
                        budgets=[256], d="best", seeds=2, tuning_seeds=1, progress=False)
        self.assertEqual(sorted(df.memory.unique()), ["linear", "softmax"])
        self.assertEqual(df.memory.tolist(), df.memory_spec.str.split(":").str[0].tolist())
        for _, r in df.iterrows():  # the chosen settings, as the row's d and spec carry them
            chosen = dict(kv.split("=") for kv in r.tuned.split(","))
            self.assertEqual(int(chosen["d"]), r.d)
            if r.memory == "softmax":
                self.assertIn("beta=" + chosen["beta"], r.memory_spec)
        s = memcap.aggregate(df)
        self.assertEqual(list(s.columns[:2]), ["memory", "memory_spec"])
        # one tuned memory is one name, whatever its chosen settings per n
        self.assertEqual(s.groupby("memory").size().to_dict(), {"linear": 2, "softmax": 2})
        merged = df.groupby(["memory_spec", "n"]).param_floats.max().reset_index()
        got = s.set_index(["memory_spec", "n"]).param_floats
        for _, r in merged.iterrows():
            self.assertEqual(got[(r.memory_spec, r.n)], r.param_floats)
        # a projection (d = 64 into a 16 x 16 grid at 256 floats) is kept as the rows report it
        rows = memcap.run(memories="linear:phi=proj", tasks="assoc_recall", n=4, budgets=256, d=64, seeds=2,
                          progress=False)
        p = memcap.aggregate(rows)
        self.assertGreater(rows.param_floats.min(), 0)
        self.assertEqual(p.param_floats.tolist(), [rows.param_floats.max()])
        self.assertEqual(p.state_floats.tolist(), [256])


if __name__ == "__main__":
    unittest.main()
