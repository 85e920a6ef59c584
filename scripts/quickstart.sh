#!/usr/bin/env bash
# Set-up (missing Debian packages), build the memcap binary, then the main job
# (scripts/reports.sh): `memcap reproduce`, the default capacity sweep (the
# recall–memory frontier, every memory at its best code width, beside the essays'
# d = 64 frame on four tasks), today's recurrent memories on the same frontier
# (scripts/studies/modern/modern.ini into reports/modern/), the summaries, the theory beside
# them, and reports/REPORT.md with tables and figures.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MEMCAP_BUILD_TARGETS=${MEMCAP_BUILD_TARGETS-memcap} bash "$root/scripts/setup.sh"
build=${MEMCAP_BUILD_DIR:-$root/build}
bash "$root/scripts/reports.sh" "$build/memcap" "$root/reports"
