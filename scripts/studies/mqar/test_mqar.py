"""The section on zoology's recall untrained (scripts/studies/mqar/section.py) on a small synthetic summary:
mqar's n* beside assoc_recall's, the cost ratio's direction, the state columns, the accuracies at the same
n, the leaders, and the heads table's rows and ratios against one head."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # scripts/

from studies.mqar import section as mqar  # noqa: E402
from memcap_report.common import read_catalog  # noqa: E402

read_catalog(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "tests", "report", "fixtures", "sweep"))

MQAR = "mqar:vocab=8192,length=256,alpha=0.01,episodes=16"
ASSOC = "assoc_recall:queries=32,noise=0,cosine=1,control=none,vocab=0,keys=random"


def row(spec, task, budget, n, acc, tuned, d=16, state=None):
    return {"memory_spec": spec, "task_spec": task, "readout": "native", "budget_floats": str(budget),
            "state_floats": str(state if state is not None else budget), "state_bits": "", "d": str(d), "n": str(n),
            "slot": "", "seeds": "10", "errors": "0", "queries": "320", "accuracy_mean_frac": str(acc),
            "accuracy_se_frac": "0.01", "accuracy_ci95_lo_frac": "", "accuracy_ci95_hi_frac": "", "tuned": tuned}


def summary():
    rows = []
    for n in (4, 16, 64):
        # the grid: mqar falls between 16 and 64, assoc_recall passes 64
        rows.append(row("linear:phi=proj,nu=1", MQAR, 4096, n, {4: 1.0, 16: 0.95, 64: 0.5}[n], "d=64", d=64))
        rows.append(row("linear:phi=proj,nu=1", ASSOC, 4096, n, 1.0, "d=64", d=64))
        # the cache: mqar below 0.9 from 16 on
        rows.append(row("softmax:beta=inf", MQAR, 4096, n, {4: 0.95, 16: 0.6, 64: 0.2}[n], "d=4,beta=inf", d=4, state=2040))
        rows.append(row("softmax:beta=inf", ASSOC, 4096, n, 1.0, "d=4,beta=inf", d=4, state=8 * n))
        # two heads of the grid: mqar halves, assoc_recall the same
        rows.append(row("linear:phi=proj,nu=1,heads=2", MQAR, 4096, n, {4: 1.0, 16: 0.6, 64: 0.1}[n], "d=64", d=64))
        rows.append(row("linear:phi=proj,nu=1,heads=2", ASSOC, 4096, n, 1.0, "d=64", d=64))
    return rows


class MqarSection(unittest.TestCase):
    def test_capacity_table_sets_the_tasks_side_by_side(self):
        s = summary()
        caps = mqar.capacities(s)
        self.assertIn(("linear", 2, "mqar", 4096), caps)
        lines, _ = mqar.capacity_table(s, caps)
        text = "\n".join(lines)
        grid = next(l for l in lines if l.startswith("| linear"))
        cells = [c.strip() for c in grid.strip("|").split("|")]
        self.assertEqual(cells[1:4], ["4096", "4096", "16384"])  # state floats; bytes = 4 x floats at fp32
        self.assertTrue(16 < float(cells[4].split()[0]) < 64, cells[4])  # n* between 16 and 64
        self.assertIn("(d=64)", cells[4])  # the width chosen at the capacity
        self.assertEqual(cells[6], "≥64")  # assoc_recall passes the largest n tried
        self.assertTrue(cells[7].startswith("≤×"), cells[7])  # a ratio against a lower bound
        self.assertEqual(cells[8], "95.0%, 100%")  # accuracies at n = 16
        self.assertIn("softmax cache", text)
        self.assertNotIn("heads", text)  # h > 1 rows are the heads table's

    def test_answer_names_leader_and_cost(self):
        caps = mqar.capacities(summary())
        words = mqar.answer(caps)
        self.assertIn("at 4096 floats linear", words["mqar_leaders"].lower())
        self.assertIn("below assoc_recall's at 2 of the 2", words["cost"])
        self.assertEqual(words["floor"], "every budget has a memory reaching 0.9")
        order = words["mqar_order"]
        self.assertLess(order.index("inear"), order.index("softmax"))

    def test_a_budget_where_nothing_passes(self):
        s = summary() + [row("linear:phi=proj,nu=1", MQAR, 1024, n, 0.7, "d=32", d=32) for n in (4, 16, 64)] + \
            [row("softmax:beta=inf", MQAR, 1024, n, 0.8, "d=4,beta=inf", d=4, state=1016) for n in (4, 16, 64)]
        words = mqar.answer(mqar.capacities(s))
        self.assertIn("at 1024 floats none (every n* <4)", words["mqar_leaders"])
        self.assertIn("at 1024 floats no memory reaches 0.9 at any n, n = 4 included (the most accurate there: softmax cache, 80.0%)",
                      words["floor"])

    def test_heads_ratio_against_one_head(self):
        caps = mqar.capacities(summary())
        lines, rows = mqar.heads_table(caps)
        self.assertEqual([(m, t, h) for m, t, _, h, _, _ in rows], [("linear", "mqar", 2), ("linear", "assoc_recall", 2)])
        mq = rows[0][5]
        self.assertLess(mq.value, 1)  # two heads hold fewer mqar pairs here
        self.assertTrue(rows[1][5].tie())  # both beyond the range: counted as a tie
        self.assertIn("h = 2", mqar.heads_words(caps))
        self.assertEqual(len(lines), 2 + 2)  # header, rule, one row per task

    def test_variants_beside_the_plain_stream(self):
        caps = mqar.capacities(summary())
        variants = []
        for n in (4, 16, 64):
            variants.append(row("linear:phi=proj,nu=1", MQAR + ",updates=4", 4096, n, {4: 1.0, 16: 0.5, 64: 0.1}[n], "d=64", d=64))
        for n in (4, 9, 16):
            variants.append(row("linear:phi=proj,nu=1", MQAR + ",key_tokens=2", 4096, n, {4: 0.95, 9: 0.8, 16: 0.4}[n], "d=64", d=64))
        vcaps = mqar.variant_caps(variants)
        self.assertEqual(sorted(v for _, v, _ in vcaps), ["compositional", "forgetting"])
        lines = mqar.variants_table(caps, vcaps)
        self.assertIn("forgetting (updates=4)", lines[0])
        self.assertIn("compositional (key_tokens=2)", lines[0])
        grid = [c.strip() for c in lines[2].strip("|").split("|")]
        self.assertEqual(grid[1], "4096")
        forgetting = float(grid[4].split()[0].rstrip(","))
        self.assertTrue(4 < forgetting < 16, grid[4])
        self.assertIn("×0.", grid[4])  # below the plain stream's n* (19)
        self.assertEqual(grid[3], "≥64")  # the plain stream's n* at 0.5
        self.assertTrue(9 < float(grid[7].split()[0]) < 16, grid[7])  # compositional n* at 0.5

    def test_capacity_in_length(self):
        variants = [row("linear:phi=proj,nu=1", "mqar:vocab=8192,length=%d,alpha=0.01,episodes=16" % t, 1024, 8, a, "d=32", d=32)
                    for t, a in ((32, 1.0), (64, 0.95), (128, 0.85), (256, 0.7))]
        lines, curves = mqar.length_table(variants)
        self.assertEqual(list(curves), [("linear", 1024)])
        self.assertIn("T = 32 | T = 64 | T = 128 | T = 256", lines[0])
        cells = [c.strip() for c in lines[2].strip("|").split("|")]
        self.assertEqual(cells[2:6], ["100%", "95.0%", "85.0%", "70.0%"])
        self.assertTrue(64 < float(cells[6].split()[0]) < 128, cells[6])  # T* between 64 and 128
        self.assertEqual(mqar.length_table([])[0], [])

    def test_no_study_no_section(self):
        self.assertEqual(mqar.section("/nonexistent"), [])


if __name__ == "__main__":
    unittest.main()
