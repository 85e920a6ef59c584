"""A memcap backend written in Python: the linear-attention grid with numpy.

    .venv/bin/python examples/python_backend/linear_numpy.py            # after `pip install` (docs/python.md)
    PYTHONPATH=build/python /usr/bin/python3 examples/python_backend/linear_numpy.py   # from the build tree

registers it as `linear_numpy` and runs it beside the C++ `linear` on the same cells. Use the
interpreter the module was built for (Debian's /usr/bin/python3, or a venv made from it): a
`python3` earlier on PATH (pyenv, conda) lacks Debian's numpy and pandas.
"""
import numpy as np

import memcap


class NumpyLinear:
    """Fast-weight grid at its natural size: M (d_value x d_key) += v k^T per pair, read M q."""

    def __init__(self, d_key, d_value, budget, seed):
        self.M = np.zeros((d_value, d_key), dtype=np.float32)

    def reset(self):
        self.M[:] = 0

    def write(self, K, V):  # row i of K, V: the i-th pair
        self.M += V.T @ K

    def read(self, Q):  # row i: the read for query i, M q
        return Q @ self.M.T

    def state(self):
        return self.M


def register(name="linear_numpy"):
    memcap.register_memory(name, NumpyLinear, state_floats=lambda d_key, d_value, budget: d_key * d_value)


if __name__ == "__main__":
    register()
    df = memcap.run(memories=["linear_numpy", "linear"], tasks="assoc_recall", n=[16, 64, 256], seeds=5)
    print(df.groupby(["n", "memory_spec"]).accuracy_frac.mean().unstack())
