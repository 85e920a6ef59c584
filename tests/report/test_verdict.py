"""Which memory when (scripts/memcap_report/verdict.py) on plain rows whose answer is known, and the
report's refusals of a missing catalog and a malformed manifest (one line, exit status 2)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from memcap_report import common, verdict  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "sweep")
common.read_catalog(FIXTURE)


def row(memory, budget, capacity, task="assoc_recall", noise="cosine=1", largest=1024):
    return dict(study="t", task=task, noise=noise, budget=budget, memory=memory, capacity=capacity,
                largest_tried=largest)


class Verdict(unittest.TestCase):
    def test_leader_runner_up_and_margin(self):
        rows = [row("softmax", 256, 64), row("linear", 256, 16), row("delta", 256, 32),
                row("softmax", 1024, 256), row("linear", 1024, 64), row("delta", 1024, 64),
                row("delta", 4096, 128)]  # one memory at a budget: not counted
        lines = verdict.table(rows)
        body = [l for l in lines if l.startswith("| assoc_recall")]
        self.assertEqual(len(body), 1)
        self.assertIn("| 256–1024 (2) |", body[0])
        self.assertIn("softmax cache = sliding-window attention (2 of 2)", body[0])
        self.assertIn("DeltaNet (`delta` = `deltanet`) (2)", body[0])  # led both budgets without the cache
        self.assertTrue(body[0].endswith("| ×2.00 – ×4.00 |"), body[0])

    def test_a_studies_largest_capacity_counts_and_bounds_are_marked(self):
        rows = [row("softmax", 256, 64, largest=64), row("linear", 256, 16), row("linear", 256, 8)]
        line = [l for l in verdict.table(rows) if l.startswith("| assoc_recall")][0]
        self.assertTrue(line.endswith("| ≥×4.00 |"), line)  # linear's 16 counts, not its 8; 64 is the largest tried

    def test_nothing_to_rank(self):
        self.assertEqual(verdict.table([]), [])
        self.assertEqual(verdict.table([row("softmax", 256, 64)]), [])


def framed(frame, memory, budget, capacity, task="mqar", noise=""):
    return dict(row(memory, budget, capacity, task, noise), frame=frame)


class TrainedFrame(unittest.TestCase):
    UNTRAINED = [row("softmax", 256, 64), row("linear", 256, 16), row("softmax", 1024, 256), row("linear", 1024, 64)]
    TRAINED = [framed("trained", "deltanet", 256, 32), framed("trained", "gla", 256, 8), framed("trained", "linear", 256, 16),
               framed("trained", "deltanet", 1024, 128), framed("trained", "gla", 1024, 64), framed("trained", "linear", 1024, 32)]
    SAME_D = [framed("untrained_d32", "deltanet", 256, 4), framed("untrained_d32", "linear", 256, 8),
              framed("untrained_d32", "deltanet", 1024, 8), framed("untrained_d32", "linear", 1024, 16)]

    def test_the_first_table_is_the_same_with_or_without_trained_rows(self):
        alone = verdict.table(self.UNTRAINED)
        both = verdict.table(self.UNTRAINED + self.TRAINED + self.SAME_D)
        self.assertNotIn("### The trained frame", alone)
        self.assertEqual(both[:len(alone)], alone)
        self.assertEqual(both[len(alone)], "### The trained frame")
        # rows without a frame and rows whose frame is "untrained" are the same frame
        relabelled = [dict(r, frame="untrained") for r in self.UNTRAINED]
        self.assertEqual(verdict.table(relabelled), alone)

    def test_trained_leader_runner_up_margin_and_the_untrained_beside(self):
        lines = verdict.table(self.UNTRAINED + self.TRAINED + self.SAME_D)
        at = lines.index("### The trained frame")
        body = [l for l in lines[at:] if l.startswith("| mqar")]
        self.assertEqual(len(body), 1)
        cells = [c.strip() for c in body[0].strip("|").split("|")]
        self.assertEqual(cells[:3], ["mqar", "—", "256–1024 (2)"])  # no query noise on mqar
        self.assertEqual(cells[3], "DeltaNet (`deltanet` = `delta`) (2 of 2)")
        self.assertEqual(cells[4], "GLA (1)")  # without DeltaNet: linear at 256 (16 > 8), GLA at 1024 (64 > 32)
        self.assertEqual(cells[5], "×2.00 – ×4.00")  # DeltaNet over GLA: 128/64 and 32/8
        self.assertEqual(cells[6], "linear attention (grid) (2 of 2)")  # untrained at the same width: 8 > 4, 16 > 8
        # the untrained-at-d rows never reach the first table
        first = lines[:at]
        self.assertFalse(any(l.startswith("| mqar") for l in first))

    def test_no_trained_memory_reaches_90_percent(self):
        rows = [framed("trained", "deltanet", 256, None), framed("trained", "gla", 256, None),
                framed("untrained_d32", "linear", 256, 8), framed("untrained_d32", "gla", 256, 4)]
        lines = verdict.table(rows)
        self.assertEqual(lines[:2], ["## Which memory when", ""])  # no untrained table: the heading still comes first
        body = [l for l in lines if l.startswith("| mqar")]
        self.assertEqual(len(body), 1)
        self.assertIn("| none reaches 90% | — | — | linear attention (grid) (1 of 1) |", body[0])

    def test_without_trained_rows_no_second_table(self):
        self.assertEqual(verdict.table(self.SAME_D), [])
        self.assertEqual(verdict.table(self.UNTRAINED + self.SAME_D), verdict.table(self.UNTRAINED))


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memcap-verdict-test-")
        self.dir = os.path.join(self.tmp, "r")
        shutil.copytree(FIXTURE, self.dir)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def report(self):
        return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report.py"), self.dir],
                              capture_output=True, text=True)

    def assert_refused(self, p, what):
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(what, p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "REPORT.md")))

    def test_no_catalog(self):
        os.remove(os.path.join(self.dir, "catalog.json"))
        self.assert_refused(self.report(), "catalog.json: not there")

    def test_a_malformed_manifest(self):
        os.makedirs(os.path.join(self.dir, "abstention"))
        with open(os.path.join(self.dir, "capacity.csv.manifest.json"), "w") as f:
            f.write("{not json")
        self.assert_refused(self.report(), "capacity.csv.manifest.json: not JSON")


if __name__ == "__main__":
    unittest.main()
