"""The section on memories that are networks (scripts/studies/deep/section.py) on small synthetic summaries:
the capacity tables with the settings and FLOPs per write, overwrite_recall's two slots, recent_recall's
window, the mini-batch/depth block kept apart, TTT-Linear against DeltaNet, and the answer both ways.

    /usr/bin/python3 -m unittest discover -s scripts/studies -t scripts
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from studies.deep import section as deep  # noqa: E402
from memcap_report.common import SUMMARY_COLUMNS  # noqa: E402
from memcap_report.common import read_catalog  # noqa: E402

# names, capacity axes and slots from memcap's tables (memcap list --json), as a reports directory has them
read_catalog(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "tests", "report", "fixtures", "sweep"))

SWEEP = os.path.join(ROOT, "tests", "report", "fixtures", "sweep")  # the main job's fixture
ASSOC = "assoc_recall:queries=32,noise=0,cosine=%s,control=none,vocab=0,keys=random,steps=1000,lr=0.01,temp=0.1"
RECENT = "recent_recall:ratio=8,buckets=2,queries=64,noise=0,cosine=1"
OVERWRITE = "overwrite_recall:rewrite=0.25,queries=64,noise=0,cosine=1"
NS = (4, 8, 16)

TTT_LINEAR = ("ttt_linear:lr=0.25,batch=1,steps=1", "d=16,lr=0.25,steps=1", 16)
TTT_MLP = ("ttt_mlp:lr=0.1,batch=1,steps=2", "d=8,lr=0.1,steps=2", 8)
TTT_MLP_RECENT = ("ttt_mlp:lr=0.1,batch=1,steps=1", "d=8,lr=0.1", 8)
TTT_LINEAR_RECENT = ("ttt_linear:lr=0.25,batch=1,steps=1", "d=16,lr=0.25", 16)
TITANS = ("titans:lr=0.1,batch=1,steps=1,momentum=0.5,forget=0,depth=2", "d=8,lr=0.1,momentum=0.5,forget=0", 8)
DELTA = ("delta:beta=0.5,phi=proj,nu=1", "d=16,beta=0.5", 16)
GATED = ("gated_deltanet:alpha=1,beta=0.2,step=plain,gate=salience,phi=proj,nu=1", "d=16,alpha=1,beta=0.2", 16)
SOFTMAX = ("softmax:beta=8", "d=4,beta=8", 4)
LINEAR = ("linear:phi=proj,nu=1", "d=16", 16)  # not a comparison memory: left out
# the block racing the mini-batch size and the depth
TTT_MLP_BATCH = ("ttt_mlp:lr=0.1,batch=4,steps=1", "d=8,lr=0.1,batch=4", 8)
TITANS_DEPTH = ("titans:lr=0.1,batch=1,steps=1,momentum=0.5,forget=0,depth=3", "d=8,lr=0.1,depth=3", 8)
FLOPS = {"ttt_linear": 4258, "delta": 4258, "ttt_mlp": 21000, "titans": 1300000, "gated_deltanet": 5300,
         "softmax": 0, "linear": 4096}
FLOPS_BATCH = 9000


def row(mem, task, budget, n, acc, slot=""):
    spec, tuned, d = mem
    r = {c: "" for c in SUMMARY_COLUMNS}
    r.update(memory=spec.split(":")[0], memory_spec=spec, task_spec=task, readout="native", budget_floats=str(budget),
             state_floats=str(budget), d=str(d), n=str(n), slot=str(slot), seeds="10", errors="0", queries="320",
             accuracy_mean_frac=str(acc), accuracy_se_frac="0.01", tuned=tuned)
    return r


def along(mem, task, budget, accs, slot=""):
    return [row(mem, task, budget, n, a, slot) for n, a in zip(NS, accs)]


def window(mem, budget, accs_by_w):
    """recent_recall rows: per window W, one row per lag bucket (slot = the bucket's largest lag)."""
    out = []
    for w, accs in zip(NS, accs_by_w):
        out += [row(mem, RECENT, budget, w, a, slot=(i + 1) * w // len(accs)) for i, a in enumerate(accs)]
    return out


def studies(titans_wins=True):
    """(deep rows, modern rows, streams rows) at 1024 floats (modern also at 256, and the linear grid: both
    left out). Capacities: assoc_recall noise 0 TTT-Linear ≥16, TTT-MLP 4, Titans 8, DeltaNet ≥16, Gated
    DeltaNet 8; cosine 0.72 TTT-Linear 8, TTT-MLP <4, Titans 4, DeltaNet 8. recent_recall TTT-Linear 8
    (its buckets 1 and 0.85 average 0.925), DeltaNet 4, Titans ≥16 (titans_wins) or 4. overwrite_recall
    rewritten TTT-Linear 8, untouched ≥16 (DeltaNet the same), TTT-MLP 4 / 4, Titans <4 / 8."""
    c1, c72 = ASSOC % "1", ASSOC % "0.72"
    d = []
    d += along(TTT_LINEAR, c1, 1024, (1, 1, 0.95)) + along(TTT_LINEAR, c72, 1024, (1, 0.95, 0.5))
    d += along(TTT_MLP, c1, 1024, (1, 0.5, 0.2)) + along(TTT_MLP, c72, 1024, (0.5, 0.2, 0.1))
    d += along(TITANS, c1, 1024, (1, 0.95, 0.3)) + along(TITANS, c72, 1024, (0.95, 0.3, 0.1))
    d += along(TTT_MLP_BATCH, c1, 1024, (1, 1, 0.5)) + along(TITANS_DEPTH, c1, 1024, (1, 0.5, 0.2))
    d += window(TTT_LINEAR_RECENT, 1024, ((1, 1), (1, 0.85), (0.9, 0.5)))
    d += window(TTT_MLP_RECENT, 1024, ((0.5, 0.5), (0.2, 0.2), (0.1, 0.1)))
    d += window(TITANS, 1024, ((1, 1), (1, 1), (1, 0.9)) if titans_wins else ((1, 1), (0.5, 0.5), (0.2, 0.2)))
    for mem, untouched, rewritten in ((TTT_LINEAR_RECENT, (1, 1, 0.95), (1, 0.95, 0.5)),
                                      (TTT_MLP_RECENT, (1, 0.5, 0.2), (0.95, 0.2, 0.1)),
                                      (TITANS, (1, 1, 0.5), (0.5, 0.2, 0.1))):
        d += along(mem, OVERWRITE, 1024, untouched, slot=0) + along(mem, OVERWRITE, 1024, rewritten, slot=1)
    m = []
    for budget in (256, 1024):
        m += along(DELTA, c1, budget, (1, 1, 0.95)) + along(DELTA, c72, budget, (1, 0.95, 0.3))
        m += along(GATED, c1, budget, (1, 1, 0.5)) + along(SOFTMAX, c1, budget, (1, 1, 1))
        m += along(LINEAR, c1, budget, (1, 1, 1))
    s = window(DELTA, 1024, ((1, 1), (1, 0.7), (0.5, 0.5))) + window(SOFTMAX, 1024, ((1, 1), (1, 1), (1, 1)))
    s += along(DELTA, OVERWRITE, 1024, (1, 1, 0.95), slot=0) + along(DELTA, OVERWRITE, 1024, (1, 0.95, 0.5), slot=1)
    s += along(DELTA, ASSOC % "1", 1024, (0.1, 0.1, 0.1))  # streams' assoc_recall: modern's is the one read
    return d, m, s


def costs(rows):
    out, seen = [], set()
    for r in rows:
        k = (r["memory_spec"], r["task_spec"], r["budget_floats"], r["d"], r["n"])
        if k in seen:
            continue
        seen.add(k)
        f = FLOPS_BATCH if r["memory_spec"] == TTT_MLP_BATCH[0] else FLOPS[r["memory"]]
        out.append(dict(memory=r["memory"], memory_spec=k[0], task_spec=k[1], budget_floats=k[2], d=k[3], n=k[4],
                        tuned=r["tuned"], state_floats=r["budget_floats"], writes=k[4], write_flops=str(f),
                        read_flops="100"))
    return out


def write_csv(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def write_studies(d, titans_wins=True, with_costs=True, manifest=None):
    dr, mr, sr = studies(titans_wins)
    write_csv(os.path.join(d, "deep", "deep_summary.csv"), dr)
    write_csv(os.path.join(d, "modern", "modern_summary.csv"), mr)
    write_csv(os.path.join(d, "streams", "streams_summary.csv"), sr)
    if with_costs:
        write_csv(os.path.join(d, "deep", "costs.csv"), costs(dr + mr + sr))
    if manifest:
        with open(os.path.join(d, "deep", "deep.csv.manifest.json"), "w") as f:
            json.dump(manifest, f)


def table_of(lines, head):
    """The Markdown table under a `### head` line: {first cell: [cells]}."""
    i = lines.index("### " + head)
    i = next(j for j in range(i, len(lines)) if lines[j].startswith("|"))
    out = {}
    for l in lines[i:]:
        if not l.startswith("|"):
            break
        cells = [c.strip() for c in l.strip("|").split("|")]
        out.setdefault(cells[0], []).append(cells[1:])
    return out


class DeepSection(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memcap-deep-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def section(self, **kw):
        write_studies(self.tmp, **kw)
        lines = deep.section(self.tmp)
        return lines, "\n".join(lines)

    def test_deep_memories_come_from_the_catalog(self):
        # memcap's table says which memories are networks trained as they write (network_layers),
        # and which are more than a matrix: the section names none of them itself
        self.assertEqual(deep.deep(), ("ttt_linear", "ttt_mlp", "titans"))
        self.assertEqual(deep.deep_mlp(), ("ttt_mlp", "titans"))
        self.assertEqual(deep.section_order()[:3], deep.deep())

    def test_no_study_no_section(self):
        self.assertEqual(deep.section(self.tmp), [])
        self.assertEqual(deep.section("/nonexistent"), [])
        # the matrix memories' studies alone are not this section
        dr, mr, sr = studies()
        write_csv(os.path.join(self.tmp, "modern", "modern_summary.csv"), mr)
        self.assertEqual(deep.section(self.tmp), [])

    def test_table_with_settings_and_flops(self):
        lines, text = self.section()
        self.assertTrue(lines[0] == "## Memories that are networks: TTT and Titans at equal state")
        t = table_of(lines, "assoc_recall (stored pairs n)")
        self.assertEqual(list(t), ["memory", "---", "TTT-Linear", "TTT-MLP", "Titans", "DeltaNet (`delta` = `deltanet`)",
                                   "Gated DeltaNet", "softmax cache = sliding-window attention"])
        self.assertEqual(t["memory"][0], ["noise 0, 1024 floats", "query–key cosine 0.72, 1024 floats"])
        self.assertEqual(t["TTT-Linear"][0], ["≥16 (d=16, lr=0.25, steps=1) · 4.3k FLOPs/write",
                                              "8.6 (d=16, lr=0.25, steps=1) · 4.3k FLOPs/write"])
        # the main block's TTT-MLP (steps raced), not the mini-batch block's (batch=4, capacity 8)
        self.assertEqual(t["TTT-MLP"][0], ["4.6 (d=8, lr=0.1, steps=2) · 21k FLOPs/write", "<4"])
        self.assertEqual(t["Titans"][0][0], "8.4 (d=8, lr=0.1, momentum=0.5, forget=0) · 1.3M FLOPs/write")
        self.assertEqual(t["Gated DeltaNet"][0], ["9.2 (d=16, alpha=1, beta=0.2) · 5.3k FLOPs/write", "—"])
        self.assertEqual(t["softmax cache = sliding-window attention"][0][0], "≥16 (d=4, beta=8) · 0 FLOPs/write")
        self.assertNotIn("256 floats", text)  # the modern study's other budget
        self.assertNotIn("linear attention", text)  # not a comparison memory
        self.assertIn("n* ties DeltaNet's (the paired ratio interval holds 1) at 1 of 2 points (not at query–key cosine 0.72, "
                      "1024 floats: 8.6 against 8.4), and its chosen lr is half DeltaNet's chosen "
                      "beta (the delta rule at beta = 2 lr) at 2 of the 2 where both have a capacity.", text)
        # (the fixture has no per-seed rows: no interval, so only equal n* tie)
        self.assertIn("noise 0, 1024 floats: Titans 8.4 against DeltaNet ≥16 (≤×0.53)", text)
        self.assertIn("query–key cosine 0.72, 1024 floats: Titans 4.2 against DeltaNet 8.4 (×0.50)", text)
        self.assertNotIn("nan", text)

    def test_overwrite_slots_are_split(self):
        lines, _ = self.section()
        rw = table_of(lines, "overwrite_recall (rewritten keys)")
        un = table_of(lines, "overwrite_recall (untouched keys)")
        self.assertEqual(rw["TTT-Linear"][0][0].split(" ")[0], "8.6")
        self.assertEqual(un["TTT-Linear"][0][0].split(" ")[0], "≥16")
        self.assertEqual(rw["Titans"][0][0], "<4")
        self.assertEqual(un["Titans"][0][0].split(" ")[0], "9.2")
        self.assertEqual(rw["TTT-MLP"][0][0], "4.2 (d=8, lr=0.1) · 21k FLOPs/write")
        self.assertNotIn("softmax cache = sliding-window attention", rw)  # the cache ran no overwrite_recall here

    def test_recent_window_averages_the_lag_buckets(self):
        lines, text = self.section()
        t = table_of(lines, "recent_recall (window W)")
        self.assertEqual(t["TTT-Linear"][0][0], "8.6 (d=16, lr=0.25) · 4.3k FLOPs/write")  # 1 and 0.85: mean 0.925
        self.assertEqual(t["DeltaNet (`delta` = `deltanet`)"][0][0].split(" ")[0], "6.3")  # 1 and 0.7: 0.85 misses (n* between 4 and 8)
        self.assertEqual(t["Titans"][0][0].split(" ")[0], "≥16")  # 1 and 0.9 at the largest window
        caps = deep.capacities([r for r in studies()[0] if not deep.is_apart(r)])
        self.assertEqual(caps[("recent_recall", "")][("ttt_linear", "cosine=1", 1024)]["capacity"], 8)
        self.assertIn("TTT-Linear's n* ties DeltaNet's (the paired ratio interval holds 1) at 0 of 1 points (not at noise "
                      "0, 1024 floats: 8.6 against 6.3)", text)

    def test_mini_batch_and_depth_apart(self):
        lines, text = self.section()
        t = table_of(lines, "Mini-batch and depth at 1024 floats")
        self.assertEqual(t["TTT-MLP"], [["batch", "noise 0", "1024", "9.2 (d=8, lr=0.1, batch=4) · 9k FLOPs/write",
                                         "4.6 (batch=1) · 21k FLOPs/write"]])
        self.assertEqual(t["Titans"], [["depth", "noise 0", "1024", "4.6 (d=8, lr=0.1, depth=3) · 1.3M FLOPs/write",
                                        "8.4 (depth=2) · 1.3M FLOPs/write"]])
        self.assertIn("n* against the main block's is higher at 1 and lower at 1 (equal: the paired ratio interval "
                      "holds 1) of the 2 (memory, noise) points; chosen: TTT-MLP "
                      "batch = 4; Titans depth = 3.", text)

    def test_answer_a_deep_memory_wins_somewhere(self):
        _, text = self.section(titans_wins=True)
        answer = next(l for l in text.split("\n") if l.startswith("**The answer.**"))
        self.assertIn("A deep MLP memory (TTT-MLP and Titans) stores more per float than the best of DeltaNet, "
                      "Gated DeltaNet and MesaNet at 1 of the 5 (task, noise, budget) points: recent_recall (window W) "
                      "at noise 0, 1024 floats (Titans ≥16 against DeltaNet 6.3); elsewhere it stores fewer at 4", answer)
        self.assertIn("a median ×4.9 for TTT-MLP (3 points), ×305 for Titans (4 points) and ×1 for TTT-Linear "
                      "(5 points).", answer)

    def test_answer_no_deep_memory_wins(self):
        _, text = self.section(titans_wins=False)
        answer = next(l for l in text.split("\n") if l.startswith("**The answer.**"))
        self.assertIn("Neither TTT-MLP nor Titans stores more per float than the best of DeltaNet, Gated DeltaNet "
                      "and MesaNet on any task part: the better of them stores fewer pairs at all 5 "
                      "(task, noise, budget) points, a median ×1/1.9 of the best matrix memory's capacity", answer)

    def test_without_costs_no_flops(self):
        _, text = self.section(with_costs=False)
        self.assertNotIn("FLOPs", text)
        self.assertIn("**The answer.** A deep MLP memory", text)

    def test_ends_of_candidates_but_not_of_ranges(self):
        manifest = {"race_candidates": {"memories": {
            "ttt_linear": {"lr": ["0.25", "0.5"], "steps": ["1", "2", "4"]},
            "titans": {"lr": ["0.02", "0.1"], "momentum": ["0", "0.5", "0.9"], "forget": ["0", "0.1"]}}}}
        lines, text = self.section(manifest=manifest)
        t = table_of(lines, "assoc_recall (stored pairs n)")
        self.assertEqual(t["TTT-Linear"][0][0], "≥16 (d=16, lr=0.25†, steps=1) · 4.3k FLOPs/write")
        self.assertEqual(t["Titans"][0][0], "8.4 (d=8, lr=0.1†, momentum=0.5, forget=0) · 1.3M FLOPs/write")
        self.assertIn("TTT-Linear's lr = 0.25 (the lowest) at 1024 floats", text)
        self.assertIn("Titans' lr = 0.1 (the highest)", text)
        self.assertNotIn("forget = 0 ", text)

    def test_fmt_flops(self):
        self.assertEqual([deep.fmt_flops(x) for x in (0, 850, 4258, 21000, 9000, 213456, 1.3e6, 2.5e9)],
                         ["0", "850", "4.3k", "21k", "9k", "213k", "1.3M", "2.5G"])

    def test_in_the_whole_report(self):
        d = os.path.join(self.tmp, "reports")
        shutil.copytree(SWEEP, d)
        write_studies(d)
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report.py"), d], capture_output=True,
                           text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "REPORT.md")) as f:
            text = f.read()
        self.assertIn("## Memories that are networks: TTT and Titans at equal state", text)
        self.assertLess(text.index("## Where decays, overwrites and gates pay"),
                        text.index("## Memories that are networks"))
        # its README from the template, every {{key}} computed: the capacity table from the CSVs
        with open(os.path.join(d, "deep", "README.md")) as f:
            readme = f.read()
        self.assertNotIn("{{", readme)
        self.assertIn("| task | noise | floats | TTT-Linear | TTT-MLP | Titans |", readme)
        self.assertIn("| assoc_recall | none | 1024 | ", readme)


if __name__ == "__main__":
    unittest.main()
