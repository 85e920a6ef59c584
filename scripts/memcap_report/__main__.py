"""python3 -m memcap_report REPORTS_DIR: see the package's docstring."""
import sys

from .report import main

sys.exit(main(sys.argv[1:]))
