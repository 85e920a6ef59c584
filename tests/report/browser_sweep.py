"""The small sweep the headless-browser test reports on: a Python backend (examples/python_backend's
linear_numpy) beside two built-ins (softmax, hrr), associative recall, widths chosen on tuning seeds.

usage: PYTHONPATH=build/python /usr/bin/python3 browser_sweep.py SOURCE_ROOT OUT_DIR
writes OUT_DIR/sweep.csv (the per-seed rows) and OUT_DIR/sweep_summary.csv (memcap.aggregate)."""
import os
import sys

import memcap

root, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "examples", "python_backend"))
import linear_numpy  # noqa: E402

linear_numpy.register("linear_numpy")
df = memcap.run(memories=["linear_numpy", "softmax:beta=best", "hrr"], tasks="assoc_recall", n=[4, 16, 64],
                budgets=[256, 1024], seeds=3, d="best", tuning_seeds=2, progress=False, threads=2)
df.to_csv(os.path.join(out, "sweep.csv"), index=False)
memcap.aggregate(df).to_csv(os.path.join(out, "sweep_summary.csv"), index=False)
print("%d rows, memories: %s" % (len(df), " ".join(sorted(df.memory.unique()))))
