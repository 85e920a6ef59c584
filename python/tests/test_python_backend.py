"""A backend written in Python runs through the same harness, tasks, seeds and CSV as the C++ ones."""
import os
import sys
import unittest

import numpy as np
import pandas as pd

import memcap
from support import EXAMPLES, ROOT, cli

sys.path.insert(0, os.path.join(EXAMPLES, "python_backend"))
import linear_numpy  # noqa: E402  examples/python_backend/linear_numpy.py

linear_numpy.register("linear_numpy")


class Failing:
    def __init__(self, d_key, d_value, budget, seed, where):
        self.where, self.d_value = where, d_value

    def reset(self):
        pass

    def write(self, K, V):
        if self.where == "write":
            raise ArithmeticError("failing on purpose")

    def read(self, Q):
        if self.where == "shape":
            return np.zeros((len(Q), self.d_value + 1), dtype=np.float32)
        if self.where == "read":
            raise ArithmeticError("failing on purpose")
        return np.zeros((len(Q), self.d_value), dtype=np.float32)

    def state(self):
        return np.zeros(1, dtype=np.float32)


memcap.register_memory("failing", Failing, params={"where": ["write", "read", "shape", "none"]}, state_floats=1)


class Decay:
    """M <- rho M + V^T K: a grid with a parameter, for spec strings and sizing."""

    def __init__(self, d_key, d_value, budget, seed, rho):
        self.rho, self.M = np.float32(rho), np.zeros((d_value, d_key), np.float32)

    def reset(self):
        self.M[:] = 0

    def write(self, K, V):
        for k, v in zip(K, V):
            self.M = self.rho * self.M + np.outer(v, k)

    def read(self, Q):
        return Q @ self.M.T

    def state(self):
        return self.M


memcap.register_memory("decay_numpy", Decay, params={"rho": 0.5},
                       state_floats=lambda d_key, d_value, budget, rho: d_key * d_value)


class PythonBackendTest(unittest.TestCase):
    def test_numpy_linear_gives_the_rows_of_cpp_linear(self):
        kwargs = dict(tasks=["assoc_recall", "lag_recall"], n=[8, 64, 256], seeds=3, progress=False)
        mine = memcap.run(memories="linear_numpy", **kwargs)
        theirs = memcap.run(memories="linear", **kwargs)
        self.assertEqual(len(mine), len(theirs))
        self.assertTrue((mine.memory_spec == "linear_numpy").all())
        self.assertTrue((mine.status == "ok").all())
        same = ["task_spec", "readout", "budget_floats", "state_floats", "param_floats", "d", "n", "seed", "slot",
                "queries", "correct", "accuracy_frac", "chance_frac", "status"]
        pd.testing.assert_frame_equal(mine[same], theirs[same])
        # the reads agree to float32 rounding (numpy's and Eigen's sums run in different orders)
        np.testing.assert_allclose(mine.target_dist_mean, theirs.target_dist_mean, rtol=1e-4)

    def test_chains_and_absent_queries_read_through_a_python_backend(self):
        kwargs = dict(tasks=["chain_recall:hops=3,cleanup=none", "assoc_recall:absent=0.5"], n=[64], seeds=3,
                      progress=False)
        mine = memcap.run(memories="linear_numpy", **kwargs)
        theirs = memcap.run(memories="linear", **kwargs)
        self.assertTrue((mine.status == "ok").all())
        same = ["task_spec", "seed", "slot", "queries", "correct", "absent_queries"]
        pd.testing.assert_frame_equal(mine[same], theirs[same])
        # the AUC ranks float32 statistics: equal up to a pair that rounding reorders
        np.testing.assert_allclose(mine.auc_frac, theirs.auc_frac, atol=2.0 / 256)

    def test_budgets_are_checked_against_the_declared_size(self):
        df = memcap.run(memories=["linear_numpy", "linear"], tasks="assoc_recall", budgets=4096, n=32, seeds=2,
                        progress=False)
        self.assertEqual(list(df.state_floats), [4096] * 4)
        with self.assertRaises(ValueError) as caught:
            memcap.run(memories="linear_numpy", tasks="assoc_recall", budgets=1024, n=32, progress=False)
        self.assertIn("minimum of 4096", str(caught.exception))

    def test_mixed_grids_on_several_threads_equal_one_thread(self):
        kwargs = dict(memories=["softmax", "linear_numpy", "hrr"], tasks="assoc_recall", n=[16, 128], seeds=4,
                      progress=False)
        pd.testing.assert_frame_equal(memcap.run(threads=2, **kwargs), memcap.run(threads=1, **kwargs))

    def test_parameters_bind_through_spec_strings(self):
        df = memcap.run(memories=["decay_numpy", "decay_numpy:rho=1"], tasks="assoc_recall", n=16, seeds=2,
                        d=16, progress=False)
        self.assertEqual(sorted(set(df.memory_spec)), ["decay_numpy:rho=0.5", "decay_numpy:rho=1"])
        with self.assertRaises(memcap.UsageError):
            memcap.run(memories="decay_numpy:rho=x", tasks="assoc_recall", n=16, progress=False)
        with self.assertRaises(memcap.UsageError):
            memcap.run(memories="decay_numpy:gamma=1", tasks="assoc_recall", n=16, progress=False)
        m = memcap.Memory("decay_numpy:rho=1", d=4)  # usable directly as well
        m.write(np.eye(4, dtype=np.float32), np.eye(4, dtype=np.float32))
        np.testing.assert_allclose(m.read(np.eye(4, dtype=np.float32)), np.eye(4))
        self.assertEqual(m.state_floats, 16)

    def test_listed_like_the_cpp_backends(self):
        names = [m["name"] for m in memcap.list()["memories"]]
        self.assertIn("linear_numpy", names)
        self.assertLess(names.index("selective"), names.index("linear_numpy"))

    def test_clashing_or_malformed_registrations_are_refused(self):
        for name in ["linear", "linear_numpy", "", "has space", "a:b"]:
            with self.assertRaises(ValueError, msg=name):
                memcap.register_memory(name, linear_numpy.NumpyLinear, state_floats=16)
        with self.assertRaises(ValueError):
            memcap.register_memory("flagged", linear_numpy.NumpyLinear, params={"on": True}, state_floats=16)
        with self.assertRaises(ValueError):
            memcap.register_memory("unsized", linear_numpy.NumpyLinear)

    def test_registering_while_a_run_is_in_progress_is_refused(self):
        def register_now(done, total):
            memcap.register_memory("too_late", linear_numpy.NumpyLinear, state_floats=16)

        with self.assertRaises(RuntimeError) as caught:
            memcap.run(memories="softmax", tasks="assoc_recall", n=8, seeds=2, progress=register_now)
        self.assertIn("not while a run", str(caught.exception))
        self.assertNotIn("too_late", [m["name"] for m in memcap.list()["memories"]])

    def test_an_exception_in_the_backend_is_a_runtime_error_naming_the_cell(self):
        for where in ["write", "read", "shape"]:
            with self.assertRaises(RuntimeError, msg=where) as caught:
                memcap.run(memories="failing:where=" + where, tasks="assoc_recall", n=8, seeds=2, progress=False)
            text = str(caught.exception)
            self.assertIn("failing", text)
            self.assertIn("ArithmeticError" if where != "shape" else "expected an array of shape", text)
        df = memcap.run(memories="failing:where=none", tasks="assoc_recall", n=8, seeds=1, progress=False)
        self.assertEqual(list(df.status), ["ok"])


memcap.register_memory("decay_raced", Decay, params={"rho": 0.5}, candidates={"rho": [0.0, 0.5, 1.0]},
                       state_floats=lambda d_key, d_value, budget, rho: d_key * d_value)


class ProjectedGrid:
    """M (d_value x d_phi) += v phi(k)^T with the built-in projection phi: a grid below d^2 floats."""

    def __init__(self, d_key, d_value, budget, seed):
        self.phi = memcap.FeatureMap("proj", d_key, max(1, budget // d_value), seed=seed)
        self.M = np.zeros((d_value, self.phi.dim), np.float32)

    def reset(self):
        self.M[:] = 0

    def write(self, K, V):
        self.M += V.T @ self.phi.apply(K)

    def read(self, Q):
        return self.phi.apply(Q) @ self.M.T

    def state(self):
        return self.M


def projected_size(d_key, d_value, budget):
    return d_value * memcap.FeatureMap.size("proj", d_key, max(1, (budget or d_key * d_value) // d_value)).dim


def projected_params(d_key, d_value, budget):
    return memcap.FeatureMap.size("proj", d_key, max(1, (budget or d_key * d_value) // d_value)).param_floats


memcap.register_memory("projected_numpy", ProjectedGrid, state_floats=projected_size, param_floats=projected_params,
                       min_budget=lambda d_key, d_value, budget: d_value)


class EqualTerms(unittest.TestCase):
    """A Python backend's parameters race like a built-in's, it can fit a budget below d^2 with the
    built-in feature maps, and it runs from the command line."""

    def test_declared_candidates_are_raced_on_tuning_seeds(self):
        kwargs = dict(tasks="assoc_recall", n=[16, 64], seeds=3, tuning_seeds=2, progress=False)
        raced = memcap.run(memories="decay_raced:rho=best", **kwargs)
        # no decay keeps every pair (a linear grid); rho = 0 keeps only the last: the race takes 1
        self.assertEqual(set(raced.memory_spec), {"decay_raced:rho=1"})
        self.assertEqual(set(raced.tuned), {"rho=1"})
        fixed = memcap.run(memories="decay_raced:rho=1", **kwargs)  # the winner's rows, as if given
        self.assertEqual(raced.accuracy_frac.tolist(), fixed.accuracy_frac.tolist())
        self.assertEqual(raced.target_dist_mean.tolist(), fixed.target_dist_mean.tolist())
        # without declared candidates `best` is refused, naming the parameter
        with self.assertRaisesRegex(memcap.UsageError, "no candidates"):
            memcap.run(memories="decay_numpy:rho=best", **kwargs)
        with self.assertRaisesRegex(memcap.UsageError, "candidates for 'beta', which is not a parameter"):
            memcap.register_memory("decay_bad", Decay, params={"rho": 0.5}, candidates={"beta": [1.0]},
                                   state_floats=1)

    def test_feature_map_size_has_the_shape_of_a_feature_map(self):
        # FeatureMap.size gives, without drawing the map, what an instance's attributes give
        for kind, d_in, max_dim, nu in [("proj", 64, 16, 1), ("proj", 16, 64, 1), ("proj", 32, 32, 1),
                                        ("dpfp", 16, 12, 2), ("taylor", 8, 30, 1)]:
            size = memcap.FeatureMap.size(kind, d_in, max_dim, nu=nu)
            f = memcap.FeatureMap(kind, d_in, max_dim, nu=nu, seed=1)
            self.assertNotIsInstance(size, dict)
            self.assertEqual((size.dim, size.param_floats, size.identity), (f.dim, f.param_floats, f.identity))
            self.assertEqual(f.apply(np.ones((1, d_in), np.float32)).shape, (1, size.dim))
            self.assertEqual(size, memcap.FeatureMap.size(kind, d_in, max_dim, nu))
        self.assertEqual(memcap.FeatureMap.size("proj", 32, 32).identity, True)
        self.assertEqual(memcap.FeatureMap.size("proj", 64, 16).identity, False)
        self.assertEqual(repr(memcap.FeatureMap.size("proj", 64, 16)),
                         "memcap.FeatureMap.Size(dim=16, param_floats=1024, identity=False)")

    def test_feature_map_fits_a_budget_below_d_squared(self):
        f = memcap.FeatureMap("proj", 64, 16, seed=3)
        self.assertEqual((f.dim, f.param_floats), (16, 1024))
        x = np.random.default_rng(0).standard_normal((5, 64)).astype(np.float32)
        self.assertEqual(f.apply(x).shape, (5, 16))
        np.testing.assert_array_equal(f.apply(x), memcap.FeatureMap("proj", 64, 16, seed=3).apply(x))
        self.assertFalse(np.array_equal(f.apply(x), memcap.FeatureMap("proj", 64, 16, seed=4).apply(x)))
        wide = memcap.FeatureMap("proj", 16, 64, seed=1)  # orthonormal columns: inner products kept exactly
        y = x[:, :16]
        np.testing.assert_allclose(wide.apply(y) @ wide.apply(y).T, y @ y.T, rtol=1e-4, atol=1e-3)
        with self.assertRaisesRegex(memcap.UsageError, "kind 'rope' is not proj, dpfp or taylor"):
            memcap.FeatureMap("rope", 8, 8)
        with self.assertRaisesRegex(memcap.UsageError, "kind 'rope' is not proj, dpfp or taylor"):
            memcap.FeatureMap.size("rope", 8, 8)
        df = memcap.run(memories=["projected_numpy", "linear:phi=proj"], tasks="assoc_recall", n=[4, 16], d=64,
                        budgets=256, seeds=4, progress=False)
        self.assertTrue((df.status == "ok").all(), df.message.tolist())
        self.assertTrue((df.state_floats == 256).all())  # 64 x 4 floats at d = 64: below d^2 = 4096
        mine = df[df.memory == "projected_numpy"]
        self.assertTrue((mine.param_floats == 4 * 64).all())

    def test_the_command_line_runs_a_python_backend(self):
        import tempfile
        example = os.path.join(ROOT, "examples", "python_backend", "linear_numpy.py")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.csv")
            cli("run", "--python-backend", example + ":lin_np", "-m", "lin_np", "-m", "linear", "-t", "assoc_recall",
                "--n", "16", "64", "--seeds", "3", "--quiet", "--out", out)
            df = memcap.read_csv(out)
            self.assertEqual(sorted(df.memory.unique()), ["lin_np", "linear"])
            mine, theirs = df[df.memory == "lin_np"], df[df.memory == "linear"]
            self.assertEqual(mine.accuracy_frac.tolist(), theirs.accuracy_frac.tolist())
            # the built-ins' rows of that run are memcap run's CSV byte for byte
            both = os.path.join(tmp, "both.csv")
            plain = os.path.join(tmp, "plain.csv")
            grid = ["-m", "linear", "-m", "hrr", "-t", "assoc_recall", "--n", "16", "--seeds", "2", "--quiet"]
            cli("run", "--python-backend", example + ":lin_np", *grid, "--out", both)
            cli("run", *grid, "--out", plain)
            with open(both, "rb") as a, open(plain, "rb") as b:
                self.assertEqual(a.read(), b.read())
            done = cli("run", "--python-backend", example + ":lin_np", "-m", "lin_np", "-t", "assoc_recall",
                       "--n", "4", "--out", out, check=False)  # exists: refused, the file kept
            self.assertEqual(done.returncode, 2)
            self.assertIn("--force", done.stderr)
            self.assertEqual(len(memcap.read_csv(out)), len(df))
            done = cli("run", "--python-backend", os.path.join(tmp, "nope.py") + ":x", "-m", "x", "-t", "assoc_recall",
                       "--n", "4", check=False)
            self.assertEqual((done.returncode, done.stderr.count("\n")), (2, 1), done.stderr)
            self.assertIn("nope.py", done.stderr)


if __name__ == "__main__":
    unittest.main()
