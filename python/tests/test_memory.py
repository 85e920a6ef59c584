"""memcap.Memory: one backend used directly from numpy."""
import unittest

import numpy as np

import memcap


def unit_rows(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


class MemoryTest(unittest.TestCase):
    def test_the_brief_example(self):
        rng = np.random.default_rng(0)
        K, V = unit_rows(rng, 32, 64), unit_rows(rng, 32, 64)
        m = memcap.Memory("delta:beta=0.5", d=64, budget=4096, seed=0)
        self.assertEqual(m.spec, "delta:beta=0.5,phi=proj,nu=1")
        self.assertEqual((m.d_key, m.d_value, m.budget), (64, 64, 4096))
        m.write(K, V)
        R = m.read(K)
        self.assertEqual(R.shape, (32, 64))
        self.assertEqual(R.dtype, np.float32)
        s = m.state()
        self.assertEqual(s.dtype, np.float32)
        self.assertEqual(s.shape, (m.state_floats,))
        self.assertLessEqual(m.state_floats, 4096)
        # each read is nearest to its own value
        self.assertTrue((np.argmax(R @ V.T, axis=1) == np.arange(32)).all())

    def test_grid_reads_stored_values_exactly_with_orthonormal_keys(self):
        rng = np.random.default_rng(1)
        K = np.linalg.qr(rng.standard_normal((16, 16)))[0].astype(np.float32)
        V = rng.standard_normal((16, 16)).astype(np.float32)
        m = memcap.Memory("linear", d=16)
        m.write(K, V)
        np.testing.assert_allclose(m.read(K), V, atol=1e-5)
        np.testing.assert_allclose(m.read(K[3]), V[3], atol=1e-5)  # one vector in, one out

    def test_reset_same_seed_and_one_at_a_time(self):
        rng = np.random.default_rng(2)
        K, V, Q = unit_rows(rng, 20, 32), unit_rows(rng, 20, 32), unit_rows(rng, 5, 32)
        for spec in ["softmax", "linear", "delta", "hrr", "selective", "linear:phi=dpfp"]:
            a = memcap.Memory(spec, d=32, budget=512, seed=7)
            b = memcap.Memory(spec, d=32, budget=512, seed=7)
            fresh = a.read(Q)
            a.write(K, V)
            for i in range(20):
                b.write(K[i], V[i])
            np.testing.assert_allclose(a.read(Q), b.read(Q), atol=1e-5, err_msg=spec)
            a.reset()
            np.testing.assert_array_equal(a.read(Q), fresh, err_msg=spec)

    def test_layouts_that_need_a_copy_are_copied(self):
        rng = np.random.default_rng(3)
        K, V = unit_rows(rng, 10, 8), unit_rows(rng, 10, 8)
        a, b = memcap.Memory("softmax", d=8), memcap.Memory("softmax", d=8)
        a.write(K, V)
        b.write(np.asfortranarray(K), np.asfortranarray(V))
        np.testing.assert_array_equal(a.state(), b.state())
        wide = np.zeros((10, 16), dtype=np.float32)
        wide[:, ::2] = K
        b.reset()
        b.write(wide[:, ::2], V)  # a strided view
        np.testing.assert_array_equal(a.state(), b.state())

    def test_wrong_dtype_or_shape_is_a_value_error_naming_what_was_expected(self):
        m = memcap.Memory("linear", d=8)
        ok = np.zeros((4, 8), dtype=np.float32)
        cases = [
            (lambda: m.write(ok.astype(np.float64), ok), "float32"),
            (lambda: m.write(np.zeros((4, 7), np.float32), ok), "(n, 8)"),
            (lambda: m.write(ok, np.zeros((3, 8), np.float32)), "same number of rows"),
            (lambda: m.write(np.zeros((2, 4, 8), np.float32), ok), "(n, 8)"),
            (lambda: m.read([[0.0] * 8]), "float32"),
            (lambda: m.read("x"), "numpy float32 array"),
        ]
        for call, needle in cases:
            with self.assertRaises(ValueError) as caught:
                call()
            self.assertIn(needle, str(caught.exception))
            self.assertNotIn("\n", str(caught.exception))

    def test_bad_specs_and_budgets_are_usage_errors(self):
        with self.assertRaises(memcap.UsageError) as caught:
            memcap.Memory("nope")
        self.assertIn("nope", str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            memcap.Memory("linear", d=64, budget=10)
        self.assertIn("minimum", str(caught.exception))
        with self.assertRaises(ValueError):
            memcap.Memory("softmax", d=0)


if __name__ == "__main__":
    unittest.main()
