#!/usr/bin/env bash
# Regenerates reports/ from the memcap binary: the catalog (memcap list --json), the essay reproduction, the
# default capacity sweep, today's recurrent memories' sweep (modern/), the summaries
# over seeds, the theory beside them, the
# capacity table, the figures, REPORT.md, the studies' READMEs and the `memcap report` pages of
# every study that has one (capacity_report/, modern/report/, and deep/report/, streams/report/
# when their summaries are there). Every CSV is rebuilt byte for byte by the same build on the same
# machine (fixed seeds, no timestamps, cells in a fixed order at any thread count).
#
# With --from-csv, no sweep runs (nor `memcap reproduce`): every report artefact is rebuilt from the
# committed CSVs: the catalog, every study's summary (memcap aggregate), the theory files, deep's
# costs.csv, scripts/report.py's tables, figures, REPORT.md and READMEs, and the `memcap report` pages.
# usage: scripts/reports.sh [--from-csv] path/to/memcap [reports-dir]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
from_csv=0
if [[ ${1:-} == --from-csv ]]; then from_csv=1; shift; fi
memcap=${1:?usage: reports.sh [--from-csv] path/to/memcap [reports-dir]}
out=${2:-$root/reports}
mkdir -p "$out"
memcap=$(cd "$(dirname "$memcap")" && pwd)/$(basename "$memcap")
out=$(cd "$out" && pwd)
cd "$out"  # relative paths from here on, so manifests carry no machine paths
config=$(realpath --relative-to="$out" "$root/scripts/sweeps/capacity.ini")

# The catalog of memcap's tables (each memory's names, each task's capacity axis and slots, the
# budget's unit): the report reads names from it, not from Python; committed beside the CSVs.
"$memcap" list --json > catalog.json.tmp  # a failure stops the script (set -e), leaving catalog.json
mv catalog.json.tmp catalog.json

if (( from_csv )); then
    echo "reports: from the committed CSVs: no sweep runs; summaries, theory, tables, figures, REPORT.md and pages" >&2
    # every study's summary over seeds, from its CSV (the main job's and modern's are made below)
    for csv in streams/streams.csv deep/deep.csv chains/chains.csv abstention/abstention.csv hybrids/hybrids.csv \
               learned_keys/learned_keys.csv frontier_large/frontier_large.csv \
               bits/bits.csv bits/bits_large.csv bits/bits_mid.csv bits/bits_wider.csv bits/bits_xl.csv \
               mqar/mqar.csv mqar/mqar_variants.csv kv/kv.csv trained/trained.csv; do
        if [[ -f $csv ]]; then "$memcap" aggregate "$csv" --out "${csv%.csv}_summary.csv"; fi
    done
    "$memcap" aggregate modern/modern.csv --out modern/modern_summary.csv
    # the theory beside the studies that keep one (the modern sweep's is made with the main sweep's, below)
    if [[ -f streams/streams_summary.csv ]]; then
        "$memcap" theory streams/streams_summary.csv --out streams/theory.csv --capacity streams/theory_capacity.csv
    fi
    if [[ -f frontier_large/frontier_large_summary.csv ]]; then
        "$memcap" theory frontier_large/frontier_large_summary.csv \
            --out frontier_large/theory.csv --capacity frontier_large/theory_capacity.csv
    fi
    if [[ -f learned_keys/learned_keys_summary.csv ]]; then
        "$memcap" theory learned_keys/learned_keys_summary.csv \
            --out learned_keys/learned_keys_theory.csv --capacity learned_keys/learned_keys_theory_capacity.csv
    fi
else
    # 1. Every essay experiment, with the essay-vs-measured table (reproduce/REPRODUCTION.md).
    echo "reports: 1/4 memcap reproduce (the essays' experiments, under a second)" >&2
    "$memcap" reproduce --out reproduce

    # 2. The default capacity sweep (regenerated from scratch: the old result is replaced).
    rm -f capacity.csv capacity.csv.manifest.json capacity.csv.journal capacity.csv.tuning capacity_race.csv
    echo "reports: 2/4 the capacity sweep: the frontier (each memory's width chosen on tuning seeds first)" \
        "and the essays' d = 64 frame, 1/2-3 min on 2 cores" >&2
    start=$(date +%s)
    "$memcap" sweep "$config" --out .
    echo "capacity sweep: $(( $(date +%s) - start )) s wall" >&2

    # 3. Today's recurrent memories on the same frontier (scripts/studies/modern/modern.ini, into modern/):
    #    the sweep and its summary (the theory beside its rows is made in step 4 with the main sweep's,
    #    and the page drawn with the main sweep's capacity lines: the same budgets and noise settings).
    modern_config=$(realpath --relative-to="$out" "$root/scripts/studies/modern/modern.ini")
    mkdir -p modern
    rm -f modern/modern.csv modern/modern.csv.manifest.json modern/modern.csv.journal modern/modern.csv.tuning \
        modern/modern_race.csv
    echo "reports: 3/4 today's recurrent memories on the frontier (RetNet, GLA, Gated DeltaNet, KDA, RWKV-7," \
        "MesaNet, Based beside the cache, the grid and the delta rule), 1/4-2 min on 2 cores" >&2
    start=$(date +%s)
    "$memcap" sweep "$modern_config" --out modern
    echo "modern sweep: $(( $(date +%s) - start )) s wall" >&2
    "$memcap" aggregate modern/modern.csv --out modern/modern_summary.csv
    rm -f modern/theory_capacity.csv  # an earlier version's; the modern page uses the main sweep's lines
fi
# The FLOPs per write at the capacity points the deep memories are compared with (their
# chosen settings are the modern sweep's): `memcap cost`, a model, no cell run.
if [[ -f deep/deep_summary.csv && -f streams/streams_summary.csv ]]; then
    "$memcap" cost deep/deep_summary.csv modern/modern_summary.csv streams/streams_summary.csv --out deep/costs.csv
fi

# 4. Summary over seeds; the models of memories/theory.hpp beside it (per-row predictions
#    and capacity lines); then the capacity table, figures and REPORT.md.
echo "reports: 4/4 summaries, theory beside them, tables, figures, REPORT.md and the pages (1-2 min: memcap theory on the main and modern sweeps, then the report and the pages side by side)" >&2
"$memcap" aggregate capacity.csv --out capacity_summary.csv
# The main sweep's theory and the modern sweep's in one process: the model calls they share (the
# cache's and the grid's rows at the same widths, lengths and noise) are made once, which saves
# the modern theory's seconds; the capacity lines cover both sweeps' budgets and noise settings (the same
# today: the main sweep's lines, which the modern page draws).
"$memcap" theory capacity_summary.csv modern/modern_summary.csv --out theory.csv --out modern/theory.csv \
    --capacity theory_capacity.csv
# Two lanes side by side (each one Python process at a time drawing figures, one core's work):
# scripts/report.py (the capacity table, figures, REPORT.md and the READMEs) then the deep
# study's page, and the other `memcap report` pages. Neither reads what the other writes, and
# each writes through a staging directory, so a failure in one leaves the other's files whole;
# the script fails if either does.
pages() {
    # The sweep's page as `memcap report` draws any sweep (capacity_report/report.html, report.md)
    # theory.csv and theory_capacity.csv are the report's theory: given, not computed a second time
    "$memcap" report capacity_summary.csv --out capacity_report --theory theory.csv --theory-capacity theory_capacity.csv
    # The modern sweep's page, with the same capacity lines (a model's line depends on the budget
    # and the noise setting only, and the two sweeps share both).
    "$memcap" report modern/modern_summary.csv --out modern/report --theory modern/theory.csv --theory-capacity theory_capacity.csv
    # The pages of the studies measured apart (their sweeps are not run here), drawn again from their summaries.
    # The streams page takes the theory written beside its summary (--from-csv writes both files),
    # not running `memcap theory` again: that was 37 of the main job's seconds.
    if [[ -f streams/theory.csv && -f streams/theory_capacity.csv ]]; then
        "$memcap" report streams/streams_summary.csv --out streams/report \
            --theory streams/theory.csv --theory-capacity streams/theory_capacity.csv
    elif [[ -f streams/streams_summary.csv ]]; then
        "$memcap" report streams/streams_summary.csv --out streams/report
    fi
}
# The deep study's page runs after scripts/report.py in its lane: the two lanes then take about
# the same time (the streams page alone is about half of the pages' time).
report_lane() {
    /usr/bin/python3 "$root/scripts/report.py" .
    if [[ -f deep/deep_summary.csv ]]; then
        "$memcap" report deep/deep_summary.csv --out deep/report
    fi
}
( set -e; report_lane ) &
report_pid=$!
( set -e; pages ) &
pages_pid=$!
status=0
wait "$report_pid" || status=$?
wait "$pages_pid" || status=$?
if (( status != 0 )); then
    echo "reports.sh: the report or a page failed (exit $status): see the message above" >&2
    exit "$status"
fi
echo "reports written to $out" >&2
