"""The section on trained memories at equal state (scripts/studies/trained/section.py) on a small committed
sweep: fixture/trained/ is what fixture/trained.ini (trained.ini reduced to three memories, one budget, short
training, two trained seeds, on a small mqar and assoc_recall) wrote, with

    memcap sweep scripts/studies/trained/fixture/trained.ini --out scripts/studies/trained/fixture/trained --threads 1
    memcap aggregate scripts/studies/trained/fixture/trained/trained.csv \\
        --out scripts/studies/trained/fixture/trained/trained_summary.csv

and trained_curves.csv beside it from `memcap run --train-curves` on the same trained memories, task, budget, d
and seeds (-s 2; the same models: a model depends on nothing else). Every model in it stopped at its step cap.

The tests read the per-seed CSV and the summary on their own (csv) and check the section's tables against them."""
import csv
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # scripts/

from studies.trained import section as trained  # noqa: E402
from memcap_report import crossing, report, verdict  # noqa: E402
from memcap_report.common import Context, read_catalog  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
read_catalog(os.path.join(ROOT, "tests", "report", "fixtures", "sweep"))
FIXTURE = os.path.join(HERE, "fixture")
FOLDER = os.path.join(FIXTURE, "trained")


def raw_rows():
    with open(os.path.join(FOLDER, "trained.csv"), newline="") as f:
        return list(csv.DictReader(f))


def summary_rows():
    with open(os.path.join(FOLDER, "trained_summary.csv"), newline="") as f:
        return list(csv.DictReader(f))


def load():
    crossing.reset_seeds()
    return trained.load(Context(FIXTURE))


def table_cells(lines):
    """{(task, budget, memory label): [cells]} of the capacity table."""
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    out = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[(cells[0], int(cells[1]), cells[2])] = dict(zip(head, cells))
    return out


class Messages(unittest.TestCase):
    def test_tokens_and_words(self):
        m = trained.parse_message("trained: lr=0.003 lr_from=tuning converged steps=2700 best_step=2200 "
                                  "heldout_loss=0.1533 plateau=4.852 left_plateau=750 layer_params=16867 extra")
        self.assertEqual((m["lr"], m["lr_from"], m["status"], m["steps"], m["left_plateau"], m["layer_params"]),
                         ("0.003", "tuning", "converged", "2700", "750", "16867"))
        self.assertEqual(trained.parse_message("trained: not_converged steps=3000")["status"], "not_converged")
        self.assertIsNone(trained.parse_message(""))
        self.assertIsNone(trained.parse_message("every learning rate failed"))

    def test_left_plateau_median_and_never(self):
        ms = [{"left_plateau": "200"}, {"left_plateau": "300"}, {"left_plateau": "-1"}]
        self.assertEqual(trained.left_words(ms), "250 (1 never)")
        self.assertEqual(trained.left_words([{"left_plateau": "-1"}]), "never")
        self.assertEqual(trained.left_words([]), "–")


class FixtureTables(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.data = load()
        cls.caps = trained.caps_of(cls.data)

    def test_frames_and_own_seeds(self):
        self.assertIsNotNone(self.data)
        frames = {f for f, _, _, _ in self.caps}
        self.assertEqual(frames, {"trained", "untrained"})
        raw = raw_rows()
        for (f, m, t, b), r in self.caps.items():
            specs = {g["memory_spec"] for g in r["group"]}
            want = sorted({int(x["seed"]) for x in raw if x["memory_spec"] in specs and x["status"] == "ok"
                           and x["task_spec"].startswith(t)})
            self.assertEqual(r["curve"].seeds.tolist(), want, (f, m, t))

    def test_another_sweeps_seeds_of_the_same_cell_are_not_drawn(self):
        # the pitfall: crossing.SEEDS merges every per-seed CSV the report loads by cell; the section bootstraps
        # over its own CSV's seeds, so a cell another sweep also measured keeps this study's seeds
        data = load()
        self.assertEqual(crossing.SEEDS, {})  # the section does not add its CSV to the global index
        for k, (s, a) in crossing.read_seeds(os.path.join(FOLDER, "trained.csv")).items():
            crossing.SEEDS[k] = (s + [s_ + 1000 for s_ in s], a + [0.0] * len(a))  # another sweep, same cells
        try:
            merged = trained.capacities(data["summary"])  # the global index: the other sweep's seeds drawn too
            self.assertTrue(all(max(r["curve"].seeds.tolist()) >= 1000 for r in merged.values()))
            caps = trained.capacities(data["summary"], data["seeds"])
            for r in caps.values():
                self.assertTrue(all(x < 1000 for x in r["curve"].seeds.tolist()))
        finally:
            crossing.reset_seeds()

    def test_capacity_rows_match_the_csvs(self):
        lines, _ = trained.capacity_table(self.caps, self.data["models"], self.data["manifest"])
        cells = table_cells(lines)
        raw, summary = raw_rows(), summary_rows()
        trained_points = [(t, b, m) for (f, m, t, b) in self.caps if f == "trained"]
        self.assertEqual(len(cells), len(trained_points))
        for t, b, m in trained_points:
            row = cells[(t, b, trained.label(m))]
            specs = {g["memory_spec"] for g in self.caps[("trained", m, t, b)]["group"]}
            messages = {(x["seed"], x["message"]) for x in raw if x["memory_spec"] in specs and x["task_spec"].startswith(t)}
            tokens = [dict(w.split("=", 1) for w in msg.split() if "=" in w) for _, msg in messages]
            # layer params and the learning rates kept, as the rows' messages give them
            self.assertEqual(row["layer params"], tokens[0]["layer_params"])
            self.assertEqual(row["lr"], ", ".join(sorted({k["lr"] for k in tokens}, key=float)))
            done = sum(" converged " in " %s " % msg for _, msg in messages)
            self.assertEqual(row["converged"], "%d of %d" % (done, len(messages)))
            # every fixture model stopped at its cap: every point is marked
            self.assertTrue(row["trained n* (0.9)"].endswith(trained.NOT_CONVERGED), row)
            # n* against the summary's means: a bound where the largest n passes or the smallest misses
            means = sorted((int(x["n"]), float(x["accuracy_mean_frac"])) for x in summary
                           if x["memory_spec"] in specs and x["task_spec"].startswith(t))
            text = row["trained n* (0.9)"]
            if means[-1][1] >= 0.9:
                self.assertTrue(text.startswith("≥%d" % means[-1][0]), (text, means))
            elif means[0][1] < 0.9:
                self.assertTrue(text.startswith("<%d" % means[0][0]), (text, means))
            else:
                v = float(text.split()[0])
                self.assertTrue(means[0][0] <= v <= means[-1][0], (text, means))
            self.assertEqual(row["state floats"].split(" / ")[0],
                             next(x["state_floats"] for x in summary if x["memory_spec"] in specs))

    def test_layer_params_without_the_message(self):
        t, b, m = next((t, b, m) for (f, m, t, b) in self.caps if f == "trained")
        tr, un = self.caps[("trained", m, t, b)], self.caps[("untrained", m, t, b)]
        ms = [dict(x) for x in trained.models_of(tr, self.data["models"])]
        want = trained.layer_params(ms)
        for x in ms:
            del x["layer_params"]
        self.assertEqual(trained.layer_params(ms, tr, un), want)  # param_floats trained − untrained
        self.assertEqual(trained.layer_params(ms), "–")

    def test_a_converged_model_is_not_marked(self):
        models = dict(self.data["models"])
        t, b, m = next((t, b, m) for (f, m, t, b) in self.caps if f == "trained")
        mine = [k for k in models if k[0] in {g["memory_spec"] for g in self.caps[("trained", m, t, b)]["group"]}
                and k[1].startswith(t)]
        self.assertEqual(len(mine), 2)
        for k in mine:
            models[k] = dict(models[k], status="converged")
        row = table_cells(trained.capacity_table(self.caps, models)[0])[(t, b, trained.label(m))]
        self.assertEqual(row["converged"], "2 of 2")
        self.assertNotIn(trained.NOT_CONVERGED, row["trained n* (0.9)"])
        models[mine[0]] = dict(models[mine[0]], status="not_converged")
        row = table_cells(trained.capacity_table(self.caps, models)[0])[(t, b, trained.label(m))]
        self.assertEqual(row["converged"], "1 of 2")
        self.assertIn(trained.NOT_CONVERGED, row["trained n* (0.9)"])
        words = trained.convergence_words(self.caps, models)
        self.assertIn("1 of the %d trained models converged" % len(models), words)

    def test_failed_models_are_named(self):
        spec = next(k[0] for k in self.data["models"] if k[0].startswith("gla:"))
        failed = {(spec, "mqar:vocab=64,length=64", 256, "32", 0): "every learning rate failed"}
        words = trained.convergence_words(self.caps, self.data["models"], failed)
        self.assertIn("1 model failed to train (error rows, left out of n*: GLA on mqar at 256 floats, 1 seed)", words)
        self.assertNotIn("failed", trained.convergence_words(self.caps, self.data["models"], {}))

    def test_ordering_and_zoology(self):
        for t in trained.TASKS:
            ts = trained.tiers(self.caps, "trained", t, 256)
            values = [trained.nstar(r) for tier in ts for _, r in tier]
            self.assertEqual(values, sorted(values, reverse=True))  # largest first
            for a, c, verdict_, rt in trained.zoology_pairs(self.caps, t, 256):
                va = trained.nstar(self.caps[("trained", a, t, 256)])
                vc = trained.nstar(self.caps[("trained", c, t, 256)])
                if verdict_ == "agrees":
                    self.assertGreater(va, vc)
                elif verdict_ == "reverses":
                    self.assertLess(va, vc)
                else:
                    self.assertTrue(rt.tie())
        words = trained.zoology_words(self.caps)
        self.assertIn("DeltaNet and Gated DeltaNet first", words)
        self.assertIn("Not in zoology's ordering: linear attention.", words)
        lines = trained.ordering_table(self.caps)
        self.assertEqual(len(lines), 2 + len(trained.TASKS))

    def test_raise_counts_every_point(self):
        words = trained.raise_words(self.caps)
        n = sum(1 for (f, m, t, b) in self.caps if f == "trained" and ("untrained", m, t, b) in self.caps)
        self.assertIn("of the %d (memory, task, budget) points" % n, words)
        lowered = {(t, b) for (f, m, t, b) in self.caps if f == "trained" and ("untrained", m, t, b) in self.caps
                   for rt in [trained.frame_ratio(self.caps[("trained", m, t, b)], self.caps[("untrained", m, t, b)])]
                   if not rt.tie() and rt.value < 1}
        for t, b in lowered:  # the lowered points, grouped by task and budget
            self.assertIn("on %s at %d floats: " % (t, b), words)

    def test_cost_reads_models_and_curves(self):
        words = trained.cost_words(self.caps, self.data["models"], self.data["curves"], self.data["manifest"])
        steps = sum(int(m["steps"]) for m in self.data["models"].values())
        self.assertIn("%d Adam steps in all" % steps, words)
        self.assertIn("no wall or CPU time", words)
        self.assertIn("trained_curves.csv", words)
        timed = trained.cost_words(self.caps, self.data["models"], [], {"wall_seconds": 3600.0, "threads": 2})
        self.assertIn("wall seconds 3600 s (the sweep ran at 2 threads)", timed)
        self.assertNotIn("trained_curves", timed)


MQAR = "mqar:vocab=256,length=128,alpha=0.01,episodes=64"


def synthetic(nstars):
    """Summary rows of trained memories on mqar at 256 floats whose mean accuracy is 1 up to `cap` and 0 above
    it: n* at 0.9 is cap x 2^0.1 (log-interpolated a tenth of the way to the next n), ≥32 where 32 passes."""
    rows = []
    for memory, cap in nstars.items():
        for n in (4, 8, 16, 32):
            rows.append({"memory_spec": memory + ":train=layer", "task_spec": MQAR, "readout": "native",
                         "budget_floats": "256", "state_floats": "256", "d": "32", "n": str(n), "slot": "",
                         "seeds": "4", "errors": "0", "queries": "256",
                         "accuracy_mean_frac": "1" if n <= cap else "0", "accuracy_se_frac": "0.01",
                         "accuracy_ci95_lo_frac": "", "accuracy_ci95_hi_frac": "", "tuned": "", "param_floats": ""})
    return rows


class Zoology(unittest.TestCase):
    def test_every_pair_across_zoologys_tiers(self):
        # zoology's order but Mamba-2 above both delta memories, and Based tied with GLA
        caps = trained.capacities(synthetic({"deltanet": 16, "gated_deltanet": 16, "rwkv7": 8, "gla": 4,
                                             "mamba2": 32, "based": 4, "softmax": 32}))
        pairs = trained.zoology_pairs(caps, "mqar", 256)
        self.assertEqual(len(pairs), 2 * 3 + 2 * 1 + 3 * 1)  # the cache is not in zoology's ordering
        got = {(a, c): v for a, c, v, _ in pairs}
        self.assertEqual(got[("deltanet", "mamba2")], "reverses")
        self.assertEqual(got[("gated_deltanet", "rwkv7")], "agrees")
        self.assertEqual(got[("gla", "based")], "ties")  # equal n*, no interval: a tie
        words = trained.zoology_words(caps)
        # reversed: DeltaNet and Gated DeltaNet against Mamba-2; tied: GLA and Based; the other 8 as zoology
        self.assertIn("of the 11 pairs zoology orders memcap orders 8 the same way, ties 1 (GLA–Based), reverses 2 "
                      "(Mamba-2 above DeltaNet: DeltaNet / Mamba-2 ≤×%.2f; Mamba-2 above Gated DeltaNet" %
                      (16 * 2 ** 0.1 / 32), words)
        self.assertNotIn("Not in zoology's ordering", words)  # every memory here is in it, or the cache
        self.assertIn("The softmax cache is left out of the comparison", words)
        ts = trained.tiers(caps, "trained", "mqar", 256)
        self.assertEqual([sorted(m for m, _ in t) for t in ts],
                         [["mamba2", "softmax"], ["deltanet", "gated_deltanet"], ["rwkv7"], ["based", "gla"]])


class Rendered(unittest.TestCase):
    def test_section_readme_and_figure(self):
        out = tempfile.mkdtemp()
        try:
            crossing.reset_seeds()
            ctx = Context(FIXTURE, figures=out)
            data = trained.load(ctx)
            lines = trained.render(data, trained.compute(data), ctx)
            self.assertEqual(lines[0], "## Trained at equal state")
            self.assertTrue(os.path.exists(os.path.join(out, "trained_curves.png")))
            self.assertIn("Held-out loss against Adam step", "\n".join(lines))
            text = report.readme("trained", trained, data, trained.compute(data), ctx)
            self.assertNotIn("{{", text)
            self.assertIn("../figures/trained_curves.png", text)
            data["curves"] = []
            self.assertIn("No training curves", trained.readme(data, [], ctx)["curves"])
        finally:
            shutil.rmtree(out)

    def test_no_study_no_section(self):
        self.assertEqual(trained.section("/nonexistent"), [])


class Verdict(unittest.TestCase):
    def test_plain_rows_and_the_trained_table(self):
        data = load()
        rows = trained.compute(data)
        self.assertEqual({r["frame"] for r in rows}, {"trained", "untrained_d32"})
        lines = verdict.table(rows)
        self.assertIn("### The trained frame", lines)
        self.assertEqual(lines[0], "## Which memory when")
        # the untrained rows at the study's width never make the first table
        self.assertEqual(verdict.table([r for r in rows if r["frame"] == "untrained_d32"]), [])
        body = [l for l in lines if l.startswith("| mqar") or l.startswith("| assoc_recall")]
        self.assertEqual(sorted(l.split(" | ")[0][2:] for l in body), sorted(trained.TASKS))


if __name__ == "__main__":
    unittest.main()
