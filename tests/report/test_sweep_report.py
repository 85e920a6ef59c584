"""Tests of `memcap report` (scripts/memcap_report/sweep.py): the report of any sweep, on small
summaries written here and on the fixture sweep. No memcap binary: theory is left out (the
page says so); tests/report_browser.sh runs the whole command in a browser."""
import csv
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

from memcap_report import common, sweep  # noqa: E402
from memcap_report.common import SUMMARY_COLUMNS  # noqa: E402

FIXTURE_SUMMARY = os.path.join(HERE, "fixtures", "sweep", "capacity_summary.csv")
# names, capacity axes and slots (memcap list --json) for the summaries written into temporary directories
common.read_catalog(os.path.join(HERE, "fixtures", "sweep"))
TASK = "assoc_recall:queries=32,noise=0,cosine=1,control=none,vocab=0,keys=random,steps=1000,lr=0.01,temp=0.1"


def summary_row(memory_spec, budget, n, mean, d="8", tuned="", se="0.01"):
    r = {c: "" for c in SUMMARY_COLUMNS}
    r.update(memory=memory_spec.split(":")[0], memory_spec=memory_spec, task_spec=TASK, readout="native",
             budget_floats=str(budget), state_floats=str(budget), d=d, n=str(n), seeds="10", errors="0",
             queries="320", accuracy_mean_frac=str(mean), accuracy_se_frac=se, tuned=tuned)
    return r


def write_summary(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def run(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "scripts"), MEMCAP_BINARY="", PATH="/usr/bin:/bin",
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "memcap_report.sweep", *args], capture_output=True, text=True,
                          env=env)


class SweepReport(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        os.environ["MEMCAP_BINARY"] = ""
        self.path_was = os.environ.get("PATH", "")
        os.environ["PATH"] = "/usr/bin:/bin"  # no memcap binary: no theory

    def tearDown(self):
        os.environ["PATH"] = self.path_was
        shutil.rmtree(self.tmp)

    def table(self, out):
        with open(os.path.join(out, "capacity.csv"), newline="") as f:
            return list(csv.DictReader(f))

    def test_capacity_is_the_largest_n_at_90_percent_even_past_a_miss(self):
        # a Python backend's name the suite has never heard of; 8 misses, 16 passes: capacity 16
        rows = [summary_row("mine:a=0.5", 256, n, acc, tuned="d=8,a=0.5")
                for n, acc in [(4, 0.97), (8, 0.88), (16, 0.91), (32, 0.4)]]
        rows += [summary_row("softmax:beta=16", 256, n, acc, d="64") for n, acc in [(4, 1.0), (8, 0.899), (16, 0.2)]]
        write_summary(os.path.join(self.tmp, "s_summary.csv"), rows)
        out = sweep.build(os.path.join(self.tmp, "s_summary.csv"), os.path.join(self.tmp, "rep"))
        t = {r["memory"]: r for r in self.table(out)}
        self.assertEqual(t["mine"]["capacity_at_0.9"], "16")
        self.assertEqual(t["mine"]["memory_spec"], "mine:a=best")  # the sweep's name: a chosen on tuning seeds
        self.assertEqual(t["mine"]["tuned_at_capacity"], "d=8,a=0.5")
        self.assertEqual(t["mine"]["capacity_per_float"], "0.0625")
        self.assertEqual(t["softmax"]["capacity_at_0.9"], "4")  # 0.899 is a miss
        self.assertEqual(t["softmax"]["memory_spec"], "softmax:beta=16 d=64")

    def test_figures_name_the_noise_as_the_tables_do(self):
        # one name for a noise setting on the page: the tables' noise column (cosine=C), in every figure title
        rows = []
        for cos in ("1", "0.72"):
            rows += [dict(summary_row("linear", 256, n, acc), task_spec=TASK.replace("cosine=1", "cosine=" + cos))
                     for n, acc in [(4, 1.0), (8, 0.95), (16, 0.5)]]
        write_summary(os.path.join(self.tmp, "s_summary.csv"), rows)
        from matplotlib.axes import Axes
        from matplotlib.figure import Figure
        titles, set_title, suptitle = [], Axes.set_title, Figure.suptitle
        Axes.set_title = lambda ax, t, *a, **k: (titles.append(t), set_title(ax, t, *a, **k))[1]
        Figure.suptitle = lambda fig, t, *a, **k: (titles.append(t), suptitle(fig, t, *a, **k))[1]
        try:
            out = sweep.build(os.path.join(self.tmp, "s_summary.csv"), os.path.join(self.tmp, "rep"))
        finally:
            Axes.set_title, Figure.suptitle = set_title, suptitle
        names = {r["noise"] for r in self.table(out)}
        self.assertEqual(names, {"cosine=1", "cosine=0.72"})
        for name in names:
            self.assertTrue(any(name in t for t in titles), (name, titles))
        self.assertFalse([t for t in titles if "noise 0" in t or "query–key" in t], titles)

    def test_an_older_tuned_column_gives_the_same_table(self):
        new = [summary_row("softmax:beta=8", 1024, n, a, d="16", tuned="d=16,beta=8") for n, a in [(4, 1), (64, 0.95)]]
        old = [dict(r, tuned="d,beta") for r in new]
        for r in old:
            del r["memory"]  # an older summary has no memory column either
        write_summary(os.path.join(self.tmp, "new.csv"), new)
        write_summary(os.path.join(self.tmp, "old.csv"), old)
        a = self.table(sweep.build(os.path.join(self.tmp, "new.csv"), os.path.join(self.tmp, "a")))
        b = self.table(sweep.build(os.path.join(self.tmp, "old.csv"), os.path.join(self.tmp, "b")))
        self.assertEqual(a, b)
        self.assertEqual(a[0]["tuned_at_capacity"], "d=16,beta=8")

    def test_the_fixture_sweep_agrees_with_the_report_packages_table(self):
        out = sweep.build(FIXTURE_SUMMARY, os.path.join(self.tmp, "rep"))
        rows = common.read_summary(FIXTURE_SUMMARY)
        frontier = [r for r in rows if common.is_frontier(r)]
        from memcap_report.capacity import capacity_rows
        expected, _ = capacity_rows(frontier, "frontier")
        got = {(r["memory_spec"], r["task"], r["noise"], r["budget_floats"]): r["capacity_at_0.9"]
               for r in self.table(out)}
        for e in expected:
            key = (e["memory_spec"], e["task"], e["noise"], str(e["budget_floats"]))
            self.assertEqual(got[key], "" if e["capacity"] is None else str(e["capacity"]), key)
        with open(os.path.join(out, "report.html")) as f:
            page = f.read()
        with open(os.path.join(out, "report.md")) as f:
            md = f.read()
        figures = md.count("![")
        self.assertGreaterEqual(figures, 2)
        self.assertEqual(page.count('src="data:image/png;base64,'), figures)  # every figure embedded
        self.assertEqual(page.count('<table class="sortable"'), 2)
        self.assertIn("none drawn (no memcap binary", page)
        for name in os.listdir(os.path.join(out, "figures")):
            self.assertIn("figures/" + name, md)

    def test_the_same_summary_gives_the_same_files_byte_for_byte(self):
        a = sweep.build(FIXTURE_SUMMARY, os.path.join(self.tmp, "a"))
        b = sweep.build(FIXTURE_SUMMARY, os.path.join(self.tmp, "b"))
        names = sorted(os.path.relpath(os.path.join(d, f), a) for d, _, fs in os.walk(a) for f in fs)
        self.assertEqual(names, sorted(os.path.relpath(os.path.join(d, f), b) for d, _, fs in os.walk(b) for f in fs))
        for n in names:
            with open(os.path.join(a, n), "rb") as x, open(os.path.join(b, n), "rb") as y:
                self.assertEqual(x.read(), y.read(), n)

    def test_bad_input_is_one_line_status_2_and_nothing_written(self):
        out = os.path.join(self.tmp, "rep")
        missing = os.path.join(self.tmp, "nope.csv")
        p = run(missing, "--out", out)
        self.assertEqual((p.returncode, p.stderr.count("\n")), (2, 1), p.stderr)
        self.assertIn(missing, p.stderr)
        junk = os.path.join(self.tmp, "junk.csv")
        with open(junk, "w") as f:
            f.write("a,b\n1,2\n")
        p = run(junk, "--out", out)
        self.assertEqual(p.returncode, 2)
        self.assertIn("neither a results CSV", p.stderr)
        p = run("--bogus")
        self.assertEqual(p.returncode, 2)
        self.assertIn("'--bogus'", p.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertEqual(sorted(os.listdir(self.tmp)), ["junk.csv"])  # no staging directory left

    def test_theory_given_as_files_is_drawn_without_the_binary(self):
        # reports/: the main job's summary, of which the fixture is a cut, and `memcap theory`'s
        # output for it (scripts/reports.sh passes these to `memcap report`).
        given = (os.path.join(ROOT, "reports", "theory.csv"), os.path.join(ROOT, "reports", "theory_capacity.csv"))
        bare = sweep.build(FIXTURE_SUMMARY, os.path.join(self.tmp, "bare"))
        drawn = sweep.build(FIXTURE_SUMMARY, os.path.join(self.tmp, "drawn"), theory_files=given)
        with open(os.path.join(drawn, "report.md")) as f:
            self.assertNotIn("Theory: none drawn", f.read())
        figures = sorted(os.listdir(os.path.join(bare, "figures")))
        self.assertEqual(figures, sorted(os.listdir(os.path.join(drawn, "figures"))))
        differ = []
        for n in figures:
            with open(os.path.join(bare, "figures", n), "rb") as x, open(os.path.join(drawn, "figures", n), "rb") as y:
                if x.read() != y.read():
                    differ.append(n)
        self.assertTrue(any(n.startswith("frontier_") for n in differ), differ)  # the capacity lines
        self.assertTrue(any(n.startswith("accuracy_") for n in differ), differ)  # the models' accuracy
        # The command line: the same files, and bad input refused with one line, nothing written.
        out = os.path.join(self.tmp, "cli")
        p = run(FIXTURE_SUMMARY, "--out", out, "--theory", given[0], "--theory-capacity", given[1])
        self.assertEqual(p.returncode, 0, p.stderr)
        for n in ["report.md", "capacity.csv"] + [os.path.join("figures", f) for f in figures]:
            with open(os.path.join(drawn, n), "rb") as x, open(os.path.join(out, n), "rb") as y:
                self.assertEqual(x.read(), y.read(), n)
        bad = os.path.join(self.tmp, "bad")
        missing = os.path.join(self.tmp, "nope.csv")
        for args, words in [(["--theory", missing], missing), (["--theory-capacity", given[1]], "needs --theory"),
                            (["--theory"], "--theory needs")]:
            p = run(FIXTURE_SUMMARY, "--out", bad, *args)
            self.assertEqual((p.returncode, p.stderr.count("\n")), (2, 1), p.stderr)
            self.assertIn(words, p.stderr)
            self.assertFalse(os.path.exists(bad))

    def test_a_results_csv_without_the_binary_names_what_it_needs(self):
        with open(os.path.join(self.tmp, "r.csv"), "w") as f:
            f.write(",".join(sweep.RESULT_COLUMNS) + "\n")
        p = run(os.path.join(self.tmp, "r.csv"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("MEMCAP_BINARY", p.stderr)


if __name__ == "__main__":
    unittest.main()
