#!/usr/bin/env bash
# Regenerates reports/ from the memcap binary: the essay reproduction, the
# default capacity sweep, its summary over seeds, the theory beside it, the
# capacity table, the figures and REPORT.md. Every CSV is rebuilt byte for byte by the same build on the same machine (fixed seeds, no
# timestamps, cells in a fixed order at any thread count).
# usage: scripts/reports.sh path/to/memcap [reports-dir]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
memcap=${1:?usage: reports.sh path/to/memcap [reports-dir]}
out=${2:-$root/reports}
mkdir -p "$out"
memcap=$(cd "$(dirname "$memcap")" && pwd)/$(basename "$memcap")
out=$(cd "$out" && pwd)
cd "$out"  # relative paths from here on, so manifests carry no machine paths
config=$(realpath --relative-to="$out" "$root/scripts/sweeps/capacity.ini")

# 1. Every essay experiment, with the essay-vs-measured table (reproduce/REPRODUCTION.md).
echo "reports: 1/3 memcap reproduce (the essays' experiments, under a second)" >&2
"$memcap" reproduce --out reproduce

# 2. The default capacity sweep (regenerated from scratch: the old result is replaced).
rm -f capacity.csv capacity.csv.manifest.json capacity.csv.journal capacity.csv.tuning
echo "reports: 2/3 the capacity sweep: the frontier (each memory's width chosen on tuning seeds first)" \
    "and the essays' d = 64 frame, 3 to 5 min on 2 cores" >&2
start=$(date +%s)
"$memcap" sweep "$config" --out .
echo "capacity sweep: $(( $(date +%s) - start )) s wall" >&2

# 3. Summary over seeds; the models of memories/theory.hpp beside it (per-row predictions
#    and capacity lines); then the capacity table, figures and REPORT.md.
echo "reports: 3/3 summary, theory beside it (20 to 40 s), tables, figures and REPORT.md" >&2
"$memcap" aggregate capacity.csv --out capacity_summary.csv
"$memcap" theory capacity_summary.csv --out theory.csv --capacity theory_capacity.csv
/usr/bin/python3 "$root/scripts/report.py" .
# The sweep's page as `memcap report` draws any sweep (capacity_report/report.html, report.md)
# theory.csv and theory_capacity.csv are the report's theory: given, not computed a second time
"$memcap" report capacity_summary.csv --out capacity_report --theory theory.csv --theory-capacity theory_capacity.csv
echo "reports written to $out" >&2
