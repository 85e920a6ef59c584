#!/usr/bin/python3
"""Builds REPORT.md, the capacity table and the figures from memcap's CSVs: the entry point
of the memcap_report package beside this file (what it reads and writes: its docstring).

usage: /usr/bin/python3 scripts/report.py [REPORTS_DIR]     (default: reports)
exit status: 0 written; 2 bad input (one line on stderr naming the problem; nothing written)
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from memcap_report.report import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
