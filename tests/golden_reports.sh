#!/usr/bin/env bash
# Regenerates the reports of a small config (scripts/sweeps/smoke.ini) and checks
# the CSVs byte for byte against the committed golden files in tests/golden/.
# usage: golden_reports.sh path/to/memcap [--update]
#
# The golden files pin the output format and every number. They were made on the
# CI machine; a different CPU or library build may legitimately change the last
# bits of some floats (Eigen picks its blocking from the cache sizes, FFTW its
# codelets from the CPU). After a deliberate change, run with --update and review
# the diff before committing.
set -euo pipefail
memcap=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$memcap" sweep "$root/scripts/sweeps/smoke.ini" --out "$work" --threads 2 2>/dev/null
"$memcap" aggregate "$work/smoke.csv" --out "$work/smoke_summary.csv" --markdown "$work/smoke.md"

if [[ ${2:-} == --update ]]; then
    cp "$work/smoke.csv" "$work/smoke_summary.csv" "$work/smoke.md" "$here/golden/"
    echo "updated tests/golden/"
    exit 0
fi
status=0
for f in smoke.csv smoke_summary.csv smoke.md; do
    if cmp -s "$work/$f" "$here/golden/$f"; then
        echo "ok   $f is byte-identical to tests/golden/$f"
    else
        echo "FAIL $f differs from tests/golden/$f:"
        diff "$here/golden/$f" "$work/$f" | head -20
        status=1
    fi
done
exit $status
