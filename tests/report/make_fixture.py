#!/usr/bin/python3
"""Cuts the report tests' fixture (tests/report/fixtures/sweep/) out of a reports directory:
associative recall of four memories at two budgets (the frontier and the essay's frame), a
few seeds of the reproduction's cells, and its verdicts.

usage: /usr/bin/python3 tests/report/make_fixture.py REPORTS_DIR   (REPORTS_DIR: a regenerated reports/)
"""
import csv
import os
import sys

MEMORIES = ("softmax", "linear", "delta", "hrr")
BUDGETS = ("1024", "4096")
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "sweep")


def cut(src, dst, keep):
    with open(src, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = [r for r in reader if keep(dict(zip(header, r)))]
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def main(reports):
    cut(os.path.join(reports, "capacity_summary.csv"), os.path.join(here, "capacity_summary.csv"),
        lambda r: r["task_spec"].startswith("assoc_recall") and r["memory_spec"].split(":")[0] in MEMORIES
        and r["budget_floats"] in BUDGETS and (r["tuned"] == "" or r["task_spec"].count("cosine=1,")))
    cut(os.path.join(reports, "reproduce", "reproduce_cells.csv"), os.path.join(here, "reproduce", "reproduce_cells.csv"),
        lambda r: int(r["seed"]) == 0 and (r["task_spec"].startswith(("lag_recall", "copying"))
                                          or "noise=0.12" in r["task_spec"]))
    cut(os.path.join(reports, "reproduce", "reproduction.csv"), os.path.join(here, "reproduce", "reproduction.csv"),
        lambda r: True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "reports")
