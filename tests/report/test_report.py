"""Tests of the report package (scripts/memcap_report) on the small fixture sweep in
fixtures/sweep/ (cut from reports/ by make_fixture.py). Run by ctest (tests/CMakeLists.txt):

    /usr/bin/python3 -m unittest discover -s tests/report -t tests/report
"""
import csv
import io
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

import memcap_report  # noqa: E402
from memcap_report import common  # noqa: E402
from memcap_report.race import at_end, narrowest_width  # noqa: E402
from studies.chains import section as chains  # noqa: E402
from studies.frontier import section as frontier_section  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "sweep")


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_rows(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


class Sweep:
    """A copy of the fixture sweep in a temporary directory, to edit and report on."""

    def __enter__(self):
        self.tmp = tempfile.mkdtemp(prefix="memcap-report-test-")
        self.dir = os.path.join(self.tmp, "sweep")
        shutil.copytree(FIXTURE, self.dir)
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.tmp)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def edit_summary(self, change):
        """change(row) edits one summary row in place."""
        rows = read_rows(self.path("capacity_summary.csv"))
        for r in rows:
            change(r)
        write_rows(self.path("capacity_summary.csv"), rows)

    def report(self):
        """Runs the command as scripts/reports.sh does; returns (status, stderr, REPORT.md or None)."""
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report.py"), self.dir],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        text = None
        if os.path.exists(self.path("REPORT.md")):
            with open(self.path("REPORT.md")) as f:
                text = f.read()
        return p.returncode, p.stderr, text


def frontier(r):
    return r["tuned"] != ""


class SpecsAndErrors(unittest.TestCase):
    def test_parameters_come_from_the_canonical_string_without_defaults(self):
        spec = "assoc_recall:queries=32,noise=0,cosine=0.72,control=none"
        self.assertEqual(common.param(spec, "cosine"), "0.72")
        self.assertEqual(common.noise_key(spec), "cosine=0.72")
        with self.assertRaises(common.ReportError) as e:
            common.param("assoc_recall:queries=32", "cosine")  # no default is filled in
        self.assertIn("'cosine'", str(e.exception))
        self.assertEqual(common.frontier_spec("softmax:beta=8", "d,beta"), "softmax:beta=best")
        self.assertEqual(common.frontier_spec("softmax:beta=8", "d=4,beta=8"), "softmax:beta=best")  # tuned as memcap now writes it

    def test_the_standard_error_is_the_summary_column(self):
        row = {"accuracy_mean_frac": "1", "accuracy_sd_frac": "0", "seeds": "10", "errors": "0", "queries": "320",
               "accuracy_se_frac": "0.0123"}
        self.assertEqual(common.se(row), 0.0123)

    def test_a_choice_at_an_end_of_its_candidates_is_flagged(self):
        manifest = {"race_candidates": {"memories": {"delta": {"beta": ["0.01", "0.1", "1"]},
                                                     "selective": {"rho": ["1", "0.99", "0.9"]}}}}
        self.assertEqual(at_end(manifest, "delta", "beta", "0.01"), "lowest")
        self.assertEqual(at_end(manifest, "delta", "beta", "0.1"), None)
        self.assertEqual(at_end(manifest, "selective", "rho", "1"), "highest")  # by value, not list order
        self.assertEqual(at_end({}, "delta", "beta", "0.01"), None)  # no manifest: nothing claimed
        edges = []
        row = {"spec_at_capacity": "delta:beta=0.01,phi=proj,nu=1", "budget_floats": 4096, "d_at_capacity": 64}
        text = frontier_section.settings_text("delta:beta=best,phi=proj,nu=1", row, manifest, edges)
        self.assertEqual(text, ", β=0.01†")
        self.assertEqual(edges, [("delta", "beta", "0.01", "lowest", 4096, 64)])
        lines = frontier_section.edge_lines(edges, {})
        self.assertIn("delta's β = 0.01 (the lowest candidate) at 4096 floats", lines[0])
        # The narrowest width is the manifest's (d = best went down to 2; a manifest that does not say: 4).
        stated = {"race_candidates": {"widths": "d = best: powers of two from 2 up to the budget, each ..."}}
        self.assertEqual(narrowest_width(stated), 2)
        self.assertEqual(narrowest_width(manifest), 4)
        self.assertIn("d = 2: softmax cache at 1024 floats",
                      frontier_section.edge_lines([], {"softmax cache": [1024]}, narrowest_width(stated))[0])
        self.assertIn("approaches the linear grid", lines[0])
        self.assertNotIn("argmax", lines[0])  # only the ends that occur are explained
        row["spec_at_capacity"] = "delta:beta=0.1,phi=proj,nu=1"
        self.assertEqual(frontier_section.settings_text("delta:beta=best,phi=proj,nu=1", row, manifest, []), ", β=0.1")
        # A spec that lists its candidates (beta=best:0.05/0.1) is raced, and its ends are its list's.
        edges = []
        text = frontier_section.settings_text("delta:beta=best:0.05/0.1,phi=proj,nu=1", row, manifest, edges)
        self.assertEqual(text, ", β=0.1†")
        self.assertEqual(edges, [("delta", "beta", "0.1", "highest", 4096, 64)])

    def test_cleanup_model(self):
        self.assertEqual(chains.cleanup_model(1.0, 64, 4), [1.0] * 4)
        for p in chains.cleanup_model(1 / 64, 64, 5):  # chance is a fixed point
            self.assertAlmostEqual(p, 1 / 64)
        p = chains.cleanup_model(0.9, 64, 3)
        self.assertAlmostEqual(p[2], 0.9 * p[1] + (1 - p[1]) * 0.1 / 63)


class Report(unittest.TestCase):
    def test_the_fixture_report(self):
        with Sweep() as s:
            status, err, text = s.report()
            self.assertEqual(status, 0, err)
            self.assertIn("softmax has the largest n* at every budget.", text)
            self.assertIn("- At d = 64, capacity (n at ≥ 90%) at 1024 and 4096 floats: softmax 8 → 32; linear 32 → 128; "
                          "delta 8 → 32; hrr 32 → 64. Still growing: softmax, linear, delta and hrr.", text)
            # the reproduction's verdicts, and how far the differing ones lie from the essay
            self.assertIn("94 of 96 published numbers agree", text)
            self.assertIn("the essay's numbers are 1.5–1.7 points below the measurement", text)
            table = read_rows(s.path("capacity_table.csv"))
            soft = [r for r in table if r["frame"] == "frontier" and r["memory_spec"] == "softmax:beta=best"]
            self.assertEqual([(r["budget_floats"], r["capacity_at_0.9"]) for r in soft], [("1024", "128"), ("4096", "256")])
            for name in ("frontier_capacity.png", "frontier_vs_n_cosine_1.png", "assoc_recall_vs_n.png", "beta_sweep.png"):
                self.assertTrue(os.path.getsize(s.path("figures", name)) > 0, name)
            self.assertEqual([n for n in os.listdir(s.dir) if n.startswith(".report.")], [])

    def test_when_the_cache_does_not_lead_the_sentence_changes(self):
        with Sweep() as s:
            def hrr_perfect(r):  # HRR reads every n tried in the frontier
                if frontier(r) and r["memory_spec"] == "hrr":
                    r["accuracy_mean_frac"] = "1"
            s.edit_summary(hrr_perfect)
            status, err, text = s.report()
            self.assertEqual(status, 0, err)
            self.assertNotIn("softmax has the largest n* at every budget", text)
            self.assertIn("hrr has the largest n* at every budget.", text)
            self.assertIn("paired bootstrap interval) at 1024 floats: hrr ≥", text)

    def test_when_the_cache_stops_growing_the_sentence_changes(self):
        with Sweep() as s:
            def cache_flat(r):  # the cache at d = 64 reads n <= 16 and nothing more, at every budget
                if not frontier(r) and r["memory_spec"].startswith("softmax"):
                    r["accuracy_mean_frac"] = "0.95" if int(r["n"]) <= 16 else "0.1"
            s.edit_summary(cache_flat)
            status, err, text = s.report()
            self.assertEqual(status, 0, err)
            self.assertIn("softmax 16 → 16; linear 32 → 128; delta 8 → 32; hrr 32 → 64. Not growing with the state "
                          "at this fixed width (the frontier above lets the width grow): softmax; still growing: "
                          "linear, delta and hrr.", text)

    def test_why_each_setting_won_from_the_race_file(self):
        """With the sweep's race file (capacity_race.csv) the frontier's table gets, at each capacity
        point, the runner-up and the margin; without one, nothing about it."""
        with Sweep() as s:
            status, err, plain = s.report()
            self.assertEqual(status, 0, err)
            self.assertNotIn("Why each setting won", plain)
            header = ["round", "memory", "memory_spec", "task_spec", "readout", "budget_floats", "n", "candidates", "tuned",
                      "mean", "se", "seeds", "runner_up", "runner_up_mean", "runner_up_se", "runner_up_seeds", "margin",
                      "reason"]
            def with_values(r):  # the summary's `tuned` as memcap writes it now: the chosen values
                if frontier(r):
                    beta = common.spec_params(r["memory_spec"]).get("beta")
                    r["tuned"] = "d=%s" % r["d"] + (",beta=%s" % beta if "beta" in r["tuned"] else "")
            s.edit_summary(with_values)
            status, err, plain = s.report()
            self.assertEqual(status, 0, err)
            races = []
            for r in read_rows(s.path("capacity_summary.csv")):
                if not frontier(r):
                    continue
                ran = common.base(r["memory_spec"]) != "linear"  # the linear grid: left alone along n, never run
                races.append(dict(zip(header, [
                    "0", common.base(r["memory_spec"]), common.frontier_spec(r["memory_spec"], r["tuned"]), r["task_spec"],
                    r["readout"], r["budget_floats"], r["n"], "12", r["tuned"], "0.96875" if ran else "",
                    "0.0125" if ran else "", "6" if ran else "0", "d=2,beta=8" if ran else "", "0.98" if ran else "",
                    "0.01" if ran else "", "6" if ran else "", "-0.01125" if ran else "",
                    "cheapest of near-ties" if ran else "one left"])))
            write_rows(s.path("capacity_race.csv"), races)
            status, err, text = s.report()
            self.assertEqual(status, 0, err)
            self.assertIn("*Why each setting won*", text)
            rows = [line for line in text.splitlines() if line.startswith("| softmax | 1024 | 128 |")]
            self.assertEqual(len(rows), 1, rows)
            self.assertEqual(rows[0], "| softmax | 1024 | 128 | d=4, β=128 | 0.969 ± 0.013 (6 seeds) | d=2, β=8 | "
                                      "0.980 ± 0.010 (6 seeds) | -0.011 | cheapest of near-ties |")
            self.assertIn("| linear | 1024 |", text)
            self.assertIn("| not run (left alone along n) | — | — | — | one left |", text)
            # the rest of the report as it was
            lines = text.splitlines()
            start = next(i for i, l in enumerate(lines) if l.startswith("*Why each setting won*"))
            end = next(i for i in range(start + 2, len(lines)) if lines[i] == "")  # the table's end
            self.assertEqual(lines[:start] + lines[end + 1:], plain.splitlines())

    def test_a_summary_without_the_standard_error_is_refused_and_nothing_is_written(self):
        with Sweep() as s:
            rows = read_rows(s.path("capacity_summary.csv"))
            for r in rows:
                del r["accuracy_se_frac"]
            write_rows(s.path("capacity_summary.csv"), rows)
            before = sorted(os.listdir(s.dir))
            status, err, text = s.report()
            self.assertEqual(status, 2)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn("no column 'accuracy_se_frac'", err)
            self.assertIsNone(text)
            self.assertEqual(sorted(os.listdir(s.dir)), before)

    def test_a_missing_directory_is_one_line_and_status_2(self):
        with Sweep() as s:
            shutil.rmtree(s.dir)
            status, err, _ = s.report()
            self.assertEqual(status, 2)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn("not a directory", err)

    def test_build_from_python(self):
        with Sweep() as s:
            memcap_report.build(s.dir)
            self.assertTrue(os.path.exists(s.path("REPORT.md")))
            with self.assertRaises(memcap_report.ReportError):
                memcap_report.build(s.path("no-such-dir"))


if __name__ == "__main__":
    unittest.main()
