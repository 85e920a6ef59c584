#!/usr/bin/env bash
# Set-up (missing Debian packages), build, then the main job (scripts/reports.sh):
# `memcap reproduce`, the default capacity sweep over six memories and four tasks,
# its summary, and reports/REPORT.md with tables and figures.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
build=${MEMCAP_BUILD_DIR:-$root/build}
bash "$root/scripts/reports.sh" "$build/memcap" "$root/reports"
