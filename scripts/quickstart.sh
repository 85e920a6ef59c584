#!/usr/bin/env bash
# Set-up (missing Debian packages), build, then the main job: the associative-
# recall capacity run and its reports in reports/ (CSV, summary, Markdown table).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
build=${MEMCAP_BUILD_DIR:-$root/build}
bash "$root/scripts/reports.sh" "$build/memcap" "$root/reports"
