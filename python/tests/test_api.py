"""memcap.run / sweep / aggregate / list against the command line: the same rows, the same errors."""
import os
import signal
import subprocess
import tempfile
import time
import unittest

import numpy as np
import pandas as pd

import memcap
from support import cli, cli_error, python


class ListTest(unittest.TestCase):
    def test_list_names_every_backend_task_and_readout(self):
        entries = memcap.list()
        names = [m["name"] for m in entries["memories"]]
        for name in ["softmax", "linear", "delta", "hrr", "rotation", "selective"]:
            self.assertIn(name, names)
        self.assertIn("assoc_recall", [t["name"] for t in entries["tasks"]])
        self.assertIn("probe", [r["name"] for r in entries["readouts"]])
        softmax = entries["memories"][names.index("softmax")]
        self.assertIn("beta", softmax["params"])
        listed = cli("list").stdout
        for name in names:
            self.assertIn("\n  %s — " % name, listed)
        # each backend's size at d = 64, natural and at B = 1024 (memories/README.md promises it)
        self.assertEqual(listed.count("      at d=64, natural: "), len(names))
        self.assertEqual(listed.count("      at d=64, B=1024: "), len(names))
        self.assertIn("at d=64, B=1024: d_phi = 16; state 1024 floats; parameters 1024 floats", listed)


class RunTest(unittest.TestCase):
    maxDiff = None

    def same_as_cli(self, kwargs, args):
        """memcap.run(**kwargs) equals the command line's CSV for `args`, read three ways."""
        df = memcap.run(progress=False, **kwargs)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.csv")
            cli("run", *args, "--quiet", "--out", path)
            # exactly the frame memcap.read_csv gives for the file the CLI wrote
            pd.testing.assert_frame_equal(df, memcap.read_csv(path))
            # the same values pandas reads from it with no help (it guesses types: empty
            # text becomes NaN, integer columns with empty fields become floats)
            plain = pd.read_csv(path)
            self.assertEqual(list(df.columns), list(plain.columns))
            for column in df.columns:
                mine = df[column].replace("", np.nan) if memcap.CELL_DTYPES[column] == "object" else df[column]
                pd.testing.assert_series_equal(mine.astype(object).where(mine.notna(), np.nan),
                                               plain[column].astype(object).where(plain[column].notna(), np.nan),
                                               check_dtype=False, obj=column)
        return df

    def test_columns_and_types_follow_the_column_table(self):
        df = memcap.run(memories="softmax", tasks="assoc_recall", n=8, seeds=2, progress=False)
        self.assertEqual(list(df.columns), [name for name, _ in memcap.columns("cells")])
        self.assertEqual({c: str(t) for c, t in df.dtypes.items()}, memcap.CELL_DTYPES)
        self.assertEqual(len(df), 2)
        self.assertTrue((df.status == "ok").all())
        self.assertTrue(df.budget_floats.isna().all())
        self.assertEqual(list(df.seed), [0, 1])

    def test_readme_example_matches_the_cli(self):
        df = self.same_as_cli(dict(memories=["softmax", "linear"], tasks=["assoc_recall"], n=[64, 256], seeds=5),
                              ["-m", "softmax", "-m", "linear", "-t", "assoc_recall", "--n", "64", "256",
                               "--seeds", "5"])
        means = df.groupby(["memory_spec", "n"]).accuracy_frac.mean()
        self.assertEqual(len(means), 4)
        self.assertGreater(means[("softmax:beta=16", 64)], 0.9)

    def test_budgets_slots_and_readouts_match_the_cli(self):
        self.same_as_cli(dict(memories=["hrr", "delta:beta=0.5"], tasks=["lag_recall", "copying"],
                              budgets=[256, "natural"], n=[8, 16], seeds=2, d=32),
                         ["-m", "hrr", "-m", "delta:beta=0.5", "-t", "lag_recall", "-t", "copying",
                          "--budget", "256", "natural", "--n", "8", "16", "--seeds", "2", "--d", "32"])
        self.same_as_cli(dict(memories="rotation", tasks="copying", n=6, seeds=2, readout="probe:train=300"),
                         ["-m", "rotation", "-t", "copying", "--n", "6", "--seeds", "2", "--readout",
                          "probe:train=300"])

    def test_tuned_width_matches_the_cli(self):
        df = self.same_as_cli(dict(memories=["hrr", "softmax"], tasks="assoc_recall", budgets=1024,
                                   d="best:8..64*2", n=32, seeds=2, tuning_seeds=2),
                              ["-m", "hrr", "-m", "softmax", "-t", "assoc_recall", "--budget", "1024", "--d",
                               "best:8..64*2", "--n", "32", "--seeds", "2", "--tuning-seeds", "2"])
        # the width chosen, as d says; the cache races its beta with it (HRR has no setting to race)
        beta = df.memory_spec.str.extract(r"beta=([^,]*)")[0]
        self.assertTrue((df.tuned == "d=" + df.d.astype(str) + (",beta=" + beta).fillna("")).all())
        self.assertTrue(beta[df.memory == "softmax"].notna().all())

    def test_any_thread_count_gives_the_same_frame(self):
        kwargs = dict(memories=["softmax", "delta"], tasks="assoc_recall", n=[16, 64], seeds=3, progress=False)
        pd.testing.assert_frame_equal(memcap.run(threads=1, **kwargs), memcap.run(threads=2, **kwargs))

    def test_progress_callback_sees_every_cell(self):
        calls = []
        memcap.run(memories="softmax", tasks="assoc_recall", n=[8, 16], seeds=3,
                   progress=lambda done, total: calls.append((done, total)))
        self.assertEqual(calls[-1], (6, 6))
        self.assertEqual(calls, sorted(calls))


class BadInputTest(unittest.TestCase):
    """Bad input raises memcap.UsageError (a ValueError) with the command line's one-line message."""

    def same_error(self, kwargs, args):
        with self.assertRaises(ValueError) as caught:
            memcap.run(progress=False, **kwargs)
        self.assertIsInstance(caught.exception, memcap.UsageError)
        self.assertEqual(str(caught.exception), cli_error("run", *args))
        self.assertNotIn("\n", str(caught.exception))

    def test_the_messages_are_the_cli_messages(self):
        base = dict(tasks="assoc_recall", n=8)
        self.same_error(dict(memories="nope", **base), ["-m", "nope", "-t", "assoc_recall", "--n", "8"])
        self.same_error(dict(memories="softmax:beta=-1", **base),
                        ["-m", "softmax:beta=-1", "-t", "assoc_recall", "--n", "8"])
        self.same_error(dict(memories="softmax", tasks="assoc_recall:queries=0", n=8),
                        ["-m", "softmax", "-t", "assoc_recall:queries=0", "--n", "8"])
        self.same_error(dict(memories="linear", budgets=10, **base),
                        ["-m", "linear", "-t", "assoc_recall", "--n", "8", "--budget", "10"])
        self.same_error(dict(memories="softmax", readout="probe:ridge=x", **base),
                        ["-m", "softmax", "-t", "assoc_recall", "--n", "8", "--readout", "probe:ridge=x"])

    def test_python_side_values_are_refused_in_one_line(self):
        for kwargs in [dict(n=[]), dict(n=0), dict(n="x"), dict(seeds=0), dict(d="wide"), dict(memories=[]),
                       dict(budgets=-5), dict(threads=0), dict(n=10 ** 12)]:
            args = dict(memories="softmax", tasks="assoc_recall", n=8)
            args.update(kwargs)
            with self.assertRaises(ValueError, msg=str(kwargs)) as caught:
                memcap.run(progress=False, **args)
            self.assertNotIn("\n", str(caught.exception))
        with self.assertRaises(ValueError):
            memcap.aggregate(os.devnull)


class AggregateTest(unittest.TestCase):
    def test_summary_equals_the_cli_summary(self):
        df = memcap.run(memories=["softmax", "hrr"], tasks=["assoc_recall", "lag_recall"], n=[8, 32], seeds=4,
                        progress=False)
        summary = memcap.aggregate(df)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.csv")
            cli("run", "-m", "softmax", "-m", "hrr", "-t", "assoc_recall", "-t", "lag_recall", "--n", "8", "32",
                "--seeds", "4", "--quiet", "--out", path)
            cli("aggregate", path, "--out", os.path.join(tmp, "summary.csv"))
            expected = memcap.read_summary_csv(os.path.join(tmp, "summary.csv"))
            pd.testing.assert_frame_equal(summary, expected)
            pd.testing.assert_frame_equal(memcap.aggregate(path), expected)
        self.assertEqual({c: str(t) for c, t in summary.dtypes.items()}, memcap.SUMMARY_DTYPES)


SWEEP = """
[sweep]
seeds = 3
d = 32
[block recall]
memories = softmax linear
tasks = assoc_recall
budgets = 512 natural
n = 4..32*2
[block lag]
memories = hrr
tasks = lag_recall
n = 8
"""


class SweepTest(unittest.TestCase):
    def test_sweep_writes_the_cli_csv_byte_for_byte(self):
        with tempfile.TemporaryDirectory() as tmp:
            config = os.path.join(tmp, "tiny.ini")
            with open(config, "w") as f:
                f.write(SWEEP)
            df = memcap.sweep(config, out=os.path.join(tmp, "py"), progress=False)
            cli("sweep", config, "--out", os.path.join(tmp, "cli"), "--quiet")
            with open(os.path.join(tmp, "py", "tiny.csv")) as a, open(os.path.join(tmp, "cli", "tiny.csv")) as b:
                self.assertEqual(a.read(), b.read())
            pd.testing.assert_frame_equal(df, memcap.read_csv(os.path.join(tmp, "cli", "tiny.csv")))
            self.assertIsNone(memcap.sweep(config, out=os.path.join(tmp, "dry"), dry_run=True))
            with self.assertRaises(ValueError):  # refuses to overwrite, as the CLI does
                memcap.sweep(config, out=os.path.join(tmp, "py"), progress=False)
            self.assertEqual(len(memcap.sweep(config, out=os.path.join(tmp, "py"), resume=True)), len(df))


INTERRUPTED = """
import sys, time, memcap
print("started", flush=True)
t = time.monotonic()
try:
    memcap.run(memories="softmax", tasks="assoc_recall", n=2048, seeds=100000, threads=1, progress=False)
except KeyboardInterrupt:
    print("interrupted after %.1f s" % (time.monotonic() - t), flush=True)
    memcap.run(memories="softmax", tasks="assoc_recall", n=8, seeds=2, progress=False)  # still usable
    print("ok", flush=True)
    sys.exit(0)
sys.exit(1)
"""


class InterruptTest(unittest.TestCase):
    def test_ctrl_c_stops_a_run_and_raises_keyboard_interrupt(self):
        proc = python(INTERRUPTED)
        self.assertEqual(proc.stdout.readline().strip(), "started")
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn("interrupted after", out)
        self.assertIn("ok", out)


if __name__ == "__main__":
    unittest.main()


class NewUserEdgesTest(unittest.TestCase):
    """What a new user typed and got a raw or misleading error for: each now works or says what is wrong."""

    def test_numpy_integers_are_integers(self):
        df = memcap.run("softmax", "assoc_recall", n=np.int64(8), seeds=np.int64(2), budgets=np.int32(1024),
                        tuning_seeds=np.int64(3), threads=np.int64(1), progress=False)
        self.assertEqual(sorted(set(df.n)), [8])
        self.assertEqual(sorted(set(df.seed)), [0, 1])
        df = memcap.run("softmax", "assoc_recall", n=np.array([4, 8]), seeds=1, progress=False)
        self.assertEqual(sorted(set(df.n)), [4, 8])

    def test_n_takes_a_range_as_the_command_line_does(self):
        df = memcap.run("softmax", "assoc_recall", n="4..16*2", seeds=1, progress=False)
        self.assertEqual(sorted(set(df.n)), [4, 8, 16])
        self.assertEqual(list(df.n), list(cli_frame("run", "-m", "softmax", "-t", "assoc_recall", "--n", "4..16*2",
                                                   "--seeds", "1").n))

    def test_seeds_is_a_count_and_says_so(self):
        with self.assertRaises(memcap.UsageError) as caught:
            memcap.run("softmax", "assoc_recall", n=8, seeds=[0, 1], progress=False)
        self.assertIn("seeds: a count S (seeds 0..S-1 are run)", str(caught.exception))
        self.assertNotIn("separated by spaces", str(caught.exception))

    def test_aggregate_of_a_foreign_frame_names_the_frame(self):
        with self.assertRaises(memcap.UsageError) as caught:
            memcap.aggregate(pd.DataFrame({"a": [1]}))
        message = str(caught.exception)
        self.assertIn("the DataFrame is not memcap results (no column 'memory', 'memory_spec'", message)
        self.assertNotIn(tempfile.gettempdir(), message)
        # a frame with the columns but a bad field: the message names the DataFrame, not a temporary file
        df = memcap.run("softmax", "assoc_recall", n=8, seeds=2, progress=False)
        df.loc[0, "memory_spec"] = "nope"
        try:
            memcap.aggregate(df)
        except memcap.UsageError as e:
            self.assertNotIn(tempfile.gettempdir(), str(e))

    def test_repr_gives_the_budget(self):
        self.assertEqual(repr(memcap.Memory("delta:beta=0.5", d=64, budget=4096)),
                         "memcap.Memory('delta:beta=0.5,phi=proj,nu=1', d=64, budget=4096)")
        self.assertEqual(repr(memcap.Memory("softmax", d=32)), "memcap.Memory('softmax:beta=16', d=32, budget=None)")

    def test_a_memory_too_large_is_refused_up_front_with_the_gb_it_needs(self):
        # under an 8 GB address-space limit, in a fresh interpreter: the same on any machine
        code = ("import resource, memcap\n"
                "resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))\n"
                "try:\n    memcap.Memory('linear', d=64, budget=4_000_000_000)\n"
                "except memcap.UsageError as e:\n    print('UsageError', e)\n")
        proc = python(code)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        self.assertRegex(out, r"^UsageError Memory\('linear:phi=proj,nu=1', d=64, budget=4000000000\) needs about "
                              r"[0-9.]+ GB, more than 80% of the [0-9.]+ GB available; lower d or the budget\n$")

    def test_register_memory_names_what_is_wrong(self):
        class OnlyInit:
            def __init__(self, d_key, d_value, budget, seed):
                pass

        with self.assertRaises(memcap.UsageError) as caught:
            memcap.register_memory("only_init", OnlyInit, state_floats=1)
        self.assertIn("class OnlyInit lacks the method(s) reset, write, read, state", str(caught.exception))

        class Complete(OnlyInit):
            def reset(self): pass
            def write(self, K, V): pass
            def read(self, Q): return Q
            def state(self): return np.zeros(1, np.float32)

        with self.assertRaises(memcap.UsageError) as caught:
            memcap.register_memory("my:mem", Complete, state_floats=1)
        self.assertIn("'my:mem' is not a memory name (letters, digits, '_', '-'; no ':'", str(caught.exception))
        self.assertNotIn("key=value", str(caught.exception))


def cli_frame(*args):
    """The CSV `memcap ARGS` prints on stdout, as memcap.read_csv reads it."""
    import io
    return memcap.read_csv(io.StringIO(cli(*args, "--quiet").stdout))
