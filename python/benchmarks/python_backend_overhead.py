"""Per-cell overhead of a backend written in Python against the same backend in C++.

    PYTHONPATH=build/python python3 python/benchmarks/python_backend_overhead.py [--seeds 100] [--repeat 10] [--task lag_recall]

Runs the same cells with the C++ `linear` grid and with its numpy re-implementation
(examples/python_backend/linear_numpy.py, registered as `linear_numpy`): associative
recall (or --task) at d = 64 and the natural size, n = 16 ... 1024, on one thread
(numpy's BLAS too), and prints for
each n the wall time per cell of both (best of --repeat runs), the difference, the
Python calls the harness made per cell, and the difference per call. Both give the
same `correct` counts (python/tests/test_python_backend.py); this only times them.
"""
import argparse
import os
import sys
import time

# numpy's BLAS on one thread too (Debian's OpenBLAS starts one per core): a fair comparison
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import memcap  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                                "python_backend"))
from linear_numpy import NumpyLinear  # noqa: E402

CALLS = {"n": 0}


class CountingLinear(NumpyLinear):
    """linear_numpy, counting the calls the harness makes into Python."""

    def __init__(self, **kw):
        CALLS["n"] += 1
        super().__init__(**kw)

    def reset(self):
        CALLS["n"] += 1
        super().reset()

    def write(self, K, V):
        CALLS["n"] += 1
        super().write(K, V)

    def read(self, Q):
        CALLS["n"] += 1
        return super().read(Q)

    def state(self):
        CALLS["n"] += 1
        return super().state()


def best_time(memory, task, n, seeds, repeat, threads):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        df = memcap.run(memories=memory, tasks=task, n=n, seeds=seeds, threads=threads, progress=False)
        best = min(best, time.perf_counter() - t)
    return best / seeds, df


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100, help="cells per n (seeds 0..S-1)")
    parser.add_argument("--repeat", type=int, default=10, help="runs per measurement; the best is kept")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n", type=int, nargs="+", default=[16, 64, 256, 1024])
    parser.add_argument("--task", default="assoc_recall", help="task spec (lag_recall, copying: 1000 episodes a cell)")
    args = parser.parse_args()

    size = lambda d_key, d_value, budget: d_key * d_value  # noqa: E731
    memcap.register_memory("linear_numpy", NumpyLinear, state_floats=size)
    memcap.register_memory("linear_counted", CountingLinear, state_floats=size)

    print("%s, d = 64, natural size, %d cells per n, %d thread(s), best of %d runs"
          % (args.task, args.seeds, args.threads, args.repeat))
    print("%6s %12s %12s %12s %11s %12s" % ("n", "C++ us/cell", "numpy us/cell", "overhead us", "calls/cell",
                                             "us per call"))
    for n in args.n:
        cpp, a = best_time("linear", args.task, n, args.seeds, args.repeat, args.threads)
        py, b = best_time("linear_numpy", args.task, n, args.seeds, args.repeat, args.threads)
        assert (a.correct.values == b.correct.values).all(), "the backends disagree"
        counts = []
        for seeds in (args.seeds, 2 * args.seeds):  # the difference leaves out calls made once per run
            CALLS["n"] = 0
            memcap.run(memories="linear_counted", tasks=args.task, n=n, seeds=seeds, threads=1, progress=False)
            counts.append(CALLS["n"])
        calls = (counts[1] - counts[0]) / args.seeds
        print("%6d %12.1f %12.1f %12.1f %11.1f %12.2f"
              % (n, cpp * 1e6, py * 1e6, (py - cpp) * 1e6, calls, (py - cpp) * 1e6 / calls))


if __name__ == "__main__":
    main()
