"""Bring your own op: a causal op with flash-linear-attention's signature, registered through
register_memory (memcap.op_memory), runs through the harness. fla's naive delta rule
(examples/python_backend/fla_delta_rule.py) reproduces the built-in `delta`: the same reads
within 1e-5 and the same score on every cell. Skipped, with the reason, when torch is absent."""
import os
import sys
import unittest

import numpy as np

import memcap
from support import EXAMPLES

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

sys.path.insert(0, os.path.join(EXAMPLES, "python_backend"))


def numpy_linear_op(q, k, v, beta, initial_state, output_final_state=True):
    """The linear-attention recurrence in fla's seq-first layout on numpy arrays: S += beta k v^T, o = S^T q."""
    S = initial_state[0, 0].copy()
    o = np.zeros_like(v)
    for t in range(q.shape[1]):
        S += beta[0, t, 0] * np.outer(k[0, t, 0], v[0, t, 0])
        o[0, t, 0] = q[0, t, 0] @ S
    return o, S[None, None]


memcap.register_memory("linear_op", numpy_linear_op, op_options={"tensors": "numpy"})


class OpBackendTest(unittest.TestCase):
    def test_a_numpy_op_reads_as_the_builtin_grid(self):
        K = np.random.default_rng(0).standard_normal((40, 16)).astype(np.float32)
        mine, theirs = memcap.Memory("linear_op", d=16, seed=0), memcap.Memory("linear", d=16, seed=0)
        mine.write(K[:20], K[20:]), theirs.write(K[:20], K[20:])
        np.testing.assert_allclose(mine.read(K[:20]), theirs.read(K[:20]), atol=1e-5)
        self.assertEqual(mine.state_floats, 16 * 16)

    def test_bad_ops_and_options_are_refused(self):
        with self.assertRaises(memcap.UsageError):
            memcap.register_memory("no_state", lambda q, k, v: (v, None))
        with self.assertRaises(memcap.UsageError):
            memcap.op_memory(numpy_linear_op, layout="diagonal")
        with self.assertRaises(memcap.UsageError):
            memcap.op_memory(numpy_linear_op, tensors="jax")

    @unittest.skipUnless(HAVE_TORCH, "torch is not installed (Debian: apt-get install python3-torch; scripts/setup.sh "
                                     "installs it): fla's naive delta rule is a torch op")
    def test_fla_naive_delta_rule_reproduces_delta(self):
        import fla_delta_rule
        fla_delta_rule.register("fla_delta")
        K = np.random.default_rng(1).standard_normal((48, 16)).astype(np.float32)
        K /= np.linalg.norm(K, axis=1, keepdims=True)
        mine, theirs = memcap.Memory("fla_delta", d=16, seed=0), memcap.Memory("delta:beta=1", d=16, seed=0)
        mine.write(K[:24], K[24:]), theirs.write(K[:24], K[24:])
        np.testing.assert_allclose(mine.read(K[:24]), theirs.read(K[:24]), atol=1e-5)
        kwargs = dict(tasks="assoc_recall", n=[8, 16, 32], d=16, seeds=3, progress=False)
        a, b = memcap.run(memories="fla_delta", **kwargs), memcap.run(memories="delta:beta=1", **kwargs)
        self.assertEqual(len(a), 9)
        self.assertTrue((a.status == "ok").all() and (a.memory_spec == "fla_delta").all())
        self.assertEqual(a.correct.tolist(), b.correct.tolist())
        np.testing.assert_allclose(a.target_dist_mean, b.target_dist_mean, atol=1e-5)

    @unittest.skipUnless(HAVE_TORCH, "torch is not installed (Debian: apt-get install python3-torch; scripts/setup.sh "
                                     "installs it): the mLSTM example is a torch op")
    def test_torch_mlstm_with_its_normaliser_in_the_state(self):
        import mlstm_torch
        mlstm_torch.register("mlstm_torch")
        m = memcap.Memory("mlstm_torch", d=8, seed=0)
        self.assertEqual(m.state_floats, 8 * 9)  # C and the normaliser n
        V = np.random.default_rng(2).standard_normal((8, 8)).astype(np.float32)
        m.write(np.eye(8, dtype=np.float32), V)  # orthonormal keys: n . q = 1, the read is the value exactly
        np.testing.assert_allclose(m.read(np.eye(8, dtype=np.float32)), V, atol=1e-5)
        np.testing.assert_allclose(np.asarray(m.state()).reshape(8, 9)[:, -1], np.ones(8), atol=1e-6)  # n = sum of the keys
        # a query twice as long: |n . q| = 2 > 1 divides the read by 2
        np.testing.assert_allclose(m.read(2 * np.eye(8, dtype=np.float32)[:1]), V[:1], atol=1e-5)
        df = memcap.run(memories="mlstm_torch", tasks="assoc_recall", n=[8, 32], d=16, seeds=2, progress=False)
        self.assertTrue((df.status == "ok").all())
        self.assertTrue((df.state_floats == 16 * 17).all())


if __name__ == "__main__":
    unittest.main()
