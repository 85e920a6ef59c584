#!/usr/bin/env bash
# Regenerates reports/ from the memcap binary. Every file here is rebuilt byte
# for byte from the commands below (fixed seeds; no timestamps in outputs).
# usage: scripts/reports.sh path/to/memcap [reports-dir]
set -euo pipefail
memcap=${1:?usage: reports.sh path/to/memcap [reports-dir]}
out=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/reports}
mkdir -p "$out"
memcap=$(cd "$(dirname "$memcap")" && pwd)/$(basename "$memcap")
cd "$out"  # relative paths only, so manifests carry no machine paths

# Every essay experiment, with the essay-vs-measured table (reproduce/REPRODUCTION.md).
"$memcap" reproduce --out reproduce --quiet

# Essay 004 Part 3: associative recall at d = 64, 20 seeds x 32 queries, natural sizes.
"$memcap" run --memory softmax --memory linear --task assoc_recall \
    --n 4 8 16 32 64 128 256 512 --seeds 20 --out "assoc_recall.csv"
"$memcap" aggregate "assoc_recall.csv" --out "assoc_recall_summary.csv" \
    --markdown "assoc_recall.md"
echo "reports written to $out:" >&2
ls -1 >&2
cat "assoc_recall.md"
