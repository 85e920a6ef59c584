"""The three front doors — `memcap run`, memcap.run and a sweep config — build their grids with one
builder: the same request gives the same cells in the same order, and the same bad request the same
refusal (each naming the key as that front door spells it)."""
import io
import os
import tempfile
import unittest

import pandas as pd

import memcap
from support import cli, cli_error

# The columns that name a cell; the rest are what it measured.
CELL = ["memory_spec", "task_spec", "readout", "budget_floats", "d", "n", "seed", "tuned"]


def sweep_frame(tmp, lines):
    """The CSV `memcap sweep` writes for a one-block config of `lines`."""
    config = os.path.join(tmp, "doors.ini")
    with open(config, "w") as f:
        f.write("[block b]\n" + "".join(line + "\n" for line in lines))
    out = os.path.join(tmp, "sweep")
    cli("sweep", config, "--out", out, "--quiet", "--threads", "2")
    return memcap.read_csv(os.path.join(out, "doors.csv"))


def sweep_error(tmp, lines):
    """The one-line refusal of a one-block config of `lines`, without its "config 'FILE' [block b]: " prefix."""
    config = os.path.join(tmp, "bad.ini")
    with open(config, "w") as f:
        f.write("[block b]\n" + "".join(line + "\n" for line in lines))
    message = cli_error("sweep", config, "--out", os.path.join(tmp, "never"), "--dry-run")
    prefix = "config '%s' [block b]: " % config
    assert message.startswith(prefix), message
    return message[len(prefix):]


def python_error(**kwargs):
    with unittest.TestCase().assertRaises(memcap.UsageError) as caught:
        memcap.run(progress=False, **kwargs)
    return str(caught.exception)


class SameCellsTest(unittest.TestCase):
    maxDiff = None

    def same_cells(self, kwargs, args, lines):
        df = memcap.run(progress=False, threads=2, **kwargs)
        ran = memcap.read_csv(io.StringIO(cli("run", *args, "--quiet", "--threads", "2").stdout))
        with tempfile.TemporaryDirectory() as tmp:
            swept = sweep_frame(tmp, lines)
        self.assertGreater(len(df), 0)
        for other in (ran, swept):
            pd.testing.assert_frame_equal(df[CELL], other[CELL])  # the cell lists
            pd.testing.assert_frame_equal(df, other)  # and what each cell measured
        return df

    def test_lists_and_ranges_give_the_same_cells(self):
        df = self.same_cells(
            dict(memories=["softmax", "linear"], tasks=["assoc_recall", "assoc_recall:queries=8"],
                 budgets="256..1024*4", n="4..16*2", seeds=2, d=16),
            ["-m", "softmax", "-m", "linear", "-t", "assoc_recall", "-t", "assoc_recall:queries=8",
             "--budget", "256..1024*4", "--n", "4..16*2", "--seeds", "2", "--d", "16"],
            ["memories = softmax linear", "tasks = assoc_recall assoc_recall:queries=8",
             "budgets = 256..1024*4", "n = 4..16*2", "seeds = 2", "d = 16"])
        self.assertEqual(sorted(set(df.budget_floats)), [256, 1024])
        self.assertEqual(sorted(set(df.n)), [4, 8, 16])
        self.assertEqual(len(df), 2 * 2 * 2 * 3 * 2)

    def test_natural_budgets_readouts_and_a_tuned_width_give_the_same_cells(self):
        self.same_cells(dict(memories=["hrr", "rotation"], tasks="copying", budgets=["natural", 256], n=[6, 4],
                             seeds=2, d=8, readout="probe:train=200"),
                        ["-m", "hrr", "-m", "rotation", "-t", "copying", "--budget", "natural", "256", "--n", "6",
                         "4", "--seeds", "2", "--d", "8", "--readout", "probe:train=200"],
                        ["memories = hrr rotation", "tasks = copying", "budgets = natural 256", "n = 6 4",
                         "seeds = 2", "d = 8", "readout = probe:train=200"])
        df = self.same_cells(dict(memories="softmax", tasks="assoc_recall", budgets=512, d="best:8..32*2", n=16,
                                  seeds=2, tuning_seeds=2),
                             ["-m", "softmax", "-t", "assoc_recall", "--budget", "512", "--d", "best:8..32*2",
                              "--n", "16", "--seeds", "2", "--tuning-seeds", "2"],
                             ["memories = softmax", "tasks = assoc_recall", "budgets = 512", "d = best:8..32*2",
                              "n = 16", "seeds = 2", "tuning_seeds = 2"])
        # the width chosen, as d says, and with it the cache's beta (d = best races it): as memory_spec says
        self.assertTrue((df.tuned == "d=" + df.d.astype(str) + ",beta=" + df.memory_spec.str.extract(r"beta=([^,]*)")[0]).all())


class SameRefusalTest(unittest.TestCase):
    """A value given twice, and a bad range, are refused alike: the message after the key's name is the same."""

    def check(self, python_kwargs, cli_args, lines, key):
        base = dict(memories="softmax", tasks="assoc_recall", n=8)
        base.update(python_kwargs)
        py = python_error(**base)
        run = cli_error("run", "-m", "softmax", "-t", "assoc_recall", *cli_args)
        with tempfile.TemporaryDirectory() as tmp:
            swept = sweep_error(tmp, ["memories = softmax", "tasks = assoc_recall"] + lines)
        cli_key = "--" + key.replace("_", "-")
        cli_key = {"--memories": "--memory", "--tasks": "--task", "--budgets": "--budget"}.get(cli_key, cli_key)
        self.assertTrue(py.startswith(key + ": "), py)
        self.assertTrue(run.startswith(cli_key + ": "), run)
        self.assertTrue(swept.startswith(key + ": "), swept)
        self.assertEqual(py[len(key):], run[len(cli_key):])
        self.assertEqual(py[len(key):], swept[len(key):])
        return py

    def test_a_value_given_twice_is_refused_by_every_front_door(self):
        msg = self.check(dict(n=[8, 4, 8]), ["--n", "8", "4", "8"], ["n = 8 4 8"], "n")
        self.assertEqual(msg, "n: '8' is given twice (each cell would run twice); give it once")
        # a range that meets a value
        self.check(dict(budgets=["256..1024*2", 512]), ["--n", "8", "--budget", "256..1024*2", "512"],
                   ["n = 8", "budgets = 256..1024*2 512"], "budgets")
        self.check(dict(n=[8], budgets=["natural", "natural"]), ["--n", "8", "--budget", "natural", "natural"],
                   ["n = 8", "budgets = natural natural"], "budgets")

    def test_a_bad_range_is_refused_alike(self):
        msg = self.check(dict(budgets="4096..256*4"), ["--n", "8", "--budget", "4096..256*4"],
                         ["n = 8", "budgets = 4096..256*4"], "budgets")
        self.assertIn("ends below its start", msg)
        self.check(dict(n="4..16*1"), ["--n", "4..16*1"], ["n = 4..16*1"], "n")


class TuningSeedsTest(unittest.TestCase):
    def test_on_tuning_seeds_scores_seeds_from_2_to_the_40(self):
        df = memcap.run("softmax", "assoc_recall", n=8, seeds=3, on_tuning_seeds=True, progress=False)
        self.assertEqual(list(df.seed), [2 ** 40, 2 ** 40 + 1, 2 ** 40 + 2])
        ran = memcap.read_csv(io.StringIO(cli("run", "-m", "softmax", "-t", "assoc_recall", "--n", "8", "--seeds",
                                              "3", "--on-tuning-seeds", "--quiet").stdout))
        pd.testing.assert_frame_equal(df, ran)
        scored = memcap.run("softmax", "assoc_recall", n=8, seeds=3, progress=False)
        self.assertEqual(list(scored.seed), [0, 1, 2])

    def test_a_choice_cannot_be_scored_on_its_own_seeds(self):
        self.assertIn("cannot score", python_error(memories="softmax:beta=best", tasks="assoc_recall", n=8,
                                                   on_tuning_seeds=True))
        msg = cli_error("run", "-m", "softmax", "-t", "assoc_recall", "--n", "8", "--budget", "256", "--d", "best",
                        "--on-tuning-seeds")
        self.assertTrue(msg.startswith("--on-tuning-seeds: the tuning seeds cannot score"), msg)


if __name__ == "__main__":
    unittest.main()
