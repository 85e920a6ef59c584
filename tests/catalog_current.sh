#!/usr/bin/env bash
# The committed catalog (reports/catalog.json) and the report fixtures' copies are what
# `memcap list --json` prints: the report reads memories' names and tasks' axes from them.
# After a change to a memory's or a task's entry: memcap list --json > reports/catalog.json,
# and copy it over the fixtures' (the paths below).
# usage: catalog_current.sh path/to/memcap
set -euo pipefail
memcap=${1:?usage: catalog_current.sh path/to/memcap}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
now=$(mktemp)
trap 'rm -f "$now"' EXIT
"$memcap" list --json > "$now"
for f in reports/catalog.json tests/report/fixtures/sweep/catalog.json scripts/studies/streams/fixture/catalog.json; do
    cmp -s "$now" "$root/$f" || { echo "catalog_current: $f is not what memcap list --json prints" >&2; exit 1; }
done
