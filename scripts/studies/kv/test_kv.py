"""The kv study's section read on the committed sweep (reports/kv/): every policy and the recurrent
memories at every budget of every task, the leaders being the largest n* of their pool, and the
README's answer naming each task once."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from memcap_report.capacity import nstar  # noqa: E402
from memcap_report.common import Context  # noqa: E402
from studies.kv import section  # noqa: E402

REPORTS = os.path.join(ROOT, "reports")
# the policies kv.ini runs (the section finds them as the catalog's caches among the study's memories)
POLICIES = ("softmax", "sink_cache", "h2o", "tova", "snapkv", "knorm", "random_evict", "kv_merge", "kivi", "mla")


class KvStudy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.data = section.load(Context(REPORTS))

    def test_every_policy_and_task_is_measured(self):
        self.assertIsNotNone(self.data, "reports/kv/kv_summary.csv is missing")
        caps = section.capacities(self.data["summary"])
        self.assertEqual(list(caps), list(section.TASKS))
        for task, per in caps.items():
            budgets = section.budgets_of(per)
            self.assertGreaterEqual(len(budgets), 3, task)
            for m in POLICIES + ("delta", "gated_deltanet"):
                for b in budgets:
                    self.assertIn((m, b), per, "%s: %s at %d floats" % (task, m, b))

    def test_leaders_hold_the_largest_nstar_of_their_pool(self):
        caps = section.capacities(self.data["summary"])
        for (task, b), (pol, pol_row, fifo, rec, rec_row) in section.points(caps).items():
            per = caps[task]
            best_policy = max(nstar(per[(m, b)]) for m in POLICIES)
            self.assertEqual(nstar(pol_row), best_policy)
            if best_policy == 0:  # every policy below the smallest n: no leader
                self.assertEqual(pol, [])
                continue
            self.assertIn(pol[0], POLICIES)
            self.assertTrue(all(m not in POLICIES for m in rec))
            self.assertIs(fifo, per[("softmax", b)])

    def test_answer_names_every_task(self):
        caps = section.capacities(self.data["summary"])
        text = section.answer(section.points(caps))
        for task in section.TASKS:
            self.assertIn(task + ":", text)
        self.assertEqual(text.count(". "), 1, "two sentences")


if __name__ == "__main__":
    unittest.main()
