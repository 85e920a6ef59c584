"""The section on today's recurrent memories (scripts/studies/modern/section.py) on a small
synthetic summary: capacities with the settings chosen there, published names, the leaders and
the answer computed from them."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # scripts/

from studies.modern import section as modern  # noqa: E402
from memcap_report.race import edge_words  # noqa: E402
from memcap_report.common import read_catalog  # noqa: E402

# names, capacity axes and slots from memcap's tables (memcap list --json), as a reports directory has them
read_catalog(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "tests", "report", "fixtures", "sweep"))

TASK0 = "assoc_recall:queries=32,noise=0,cosine=1,control=none,vocab=0,keys=random"
TASK1 = "assoc_recall:queries=32,noise=0,cosine=0.72,control=none,vocab=0,keys=random"


def row(spec, task, budget, n, acc, tuned, d=16):
    return {"memory_spec": spec, "task_spec": task, "readout": "native", "budget_floats": str(budget),
            "state_floats": str(budget), "d": str(d), "n": str(n), "slot": "", "seeds": "10", "errors": "0",
            "queries": "320", "accuracy_mean_frac": str(acc), "accuracy_se_frac": "0.01",
            "accuracy_ci95_lo_frac": "", "accuracy_ci95_hi_frac": "", "tuned": tuned}


def summary():
    rows = []
    for task in (TASK0, TASK1):
        for n, a in ((4, 1.0), (8, 0.95), (16, 0.5)):
            rows.append(row("softmax:beta=64", task, 256, n, 1.0 if n < 16 else 0.92, "d=4,beta=64", d=4))
            rows.append(row("linear:phi=proj,nu=1", task, 256, n, a, "d=16"))
            rows.append(row("gated_deltanet:alpha=1,beta=0.2,step=plain,gate=salience,phi=proj,nu=1", task, 256, n,
                            a, "d=16,alpha=1,beta=0.2"))
            rows.append(row("mesanet:lambda=0.01,gamma=1,gate=salience", task, 256, n, 1.0 if n < 16 else 0.3,
                            "d=8,lambda=0.01,gamma=1", d=8))
    return rows


class ModernSection(unittest.TestCase):
    def test_table_names_models_and_settings(self):
        lines, caps, _ = modern.table(summary())
        text = "\n".join(lines)
        self.assertIn("Gated DeltaNet", text)
        self.assertIn("softmax cache = sliding-window attention", text)
        self.assertIn("8.6 (d=16, alpha=1, beta=0.2)", text)  # 16 misses: n* between 8 and 16
        self.assertIn("≥16 (d=4, beta=64)", text)  # the largest n tried passes
        self.assertEqual(caps[("mesanet", "cosine=1", 256)]["capacity"], 8)

    def test_leaders_and_answer(self):
        _, caps, _ = modern.table(summary())
        lead = modern.leaders(caps)
        ms, top, cache = lead[("cosine=1", 256)]
        # n* 8.8 against 8.6: without per-seed rows (no interval) only equal n* tie
        self.assertEqual((sorted(ms), top["nstar"][0.9].value > 8.7, cache["capacity"]), (["mesanet"], True, 16))
        words = modern.answer(lead)
        self.assertIn("at 2 of the 2", words)
        self.assertIn("8.8 against the cache's ≥16", words)

    def test_ends_of_candidates_are_flagged(self):
        manifest = {"race_candidates": {"memories": {"softmax": {"beta": ["1", "64"]},
                                                     "gated_deltanet": {"alpha": ["1", "0.9"], "beta": ["0.1", "0.2", "1"]}}}}
        lines, _, edges = modern.table(summary(), manifest)
        text = "\n".join(lines)
        self.assertIn("beta=64†", text)
        self.assertIn("alpha=1, beta=0.2)", text)  # a decay of 1 is its range's end; 0.2 is inside
        self.assertIn("the highest", edge_words(edges))
        self.assertEqual(edge_words({}), "")

    def test_no_study_no_section(self):
        self.assertEqual(modern.section("/nonexistent"), [])


if __name__ == "__main__":
    unittest.main()
