#!/usr/bin/env bash
# Regenerates every study: the main job (scripts/reports.sh: the essays, the capacity sweep, the modern
# sweep and the report), then each study's sweep(s), then every report artefact again from the CSVs
# (scripts/reports.sh --from-csv: summaries, theory, tables, figures, REPORT.md, the studies' READMEs
# and pages). One line per sweep as it starts, with the time since the start and an ETA for the whole
# run; the sweeps' own progress bars below it.
#
# usage: scripts/studies.sh [--only A,B] [--skip A,B] [--threads T] [--dry-run | --check] [--list] path/to/memcap [reports-dir]
#   --only A,B   run these studies only (names: --list)
#   --skip A,B   run every default study but these
#   --threads T  passed to each study's sweep (default: all cores; the main job uses all cores)
#   --dry-run    print each sweep's cells and estimated time (memcap sweep --dry-run); run nothing
#   --check      check that memcap accepts each sweep's config (memcap sweep --check); time and run nothing
#   --list       print the studies, their sweeps and whether they run by default; run nothing
# The two extra-large sweeps (bits_large, about an hour on 2 cores, and bits_xl, well over
# an hour and a half) run only when named in --only; on a cluster they run through MPI or
# Slurm (docs/sweeps.md).
#
# The ETA: before the first sweep, each sweep's estimate from `memcap sweep --dry-run` (timed sample
# cells, tuning cells and training steps, a few seconds a sweep; crossing rounds are not in it) is summed;
# once three runs have finished, the estimate of those still to run is scaled by the median of their
# measured / estimated ratios, each weighted by the run's time (so a run of seconds, whose ratio is
# mostly start-up and rounding, weighs little). Not by the pooled ratio: each sweep's estimate misses
# by its own factor, from about a fortieth (the modern sweep's race) to several times, and the
# main job's alone would set the scale for hours.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# name | sweeps (configs relative to the repository root) | default (1) or on request only (0)
STUDIES=(
    "main|scripts/sweeps/capacity.ini scripts/studies/modern/modern.ini|1"
    "streams|scripts/studies/streams/streams.ini|1"
    "deep|scripts/studies/deep/deep.ini|1"
    "chains|scripts/studies/chains/chains.ini|1"
    "abstention|scripts/studies/abstention/abstention.ini|1"
    "hybrids|scripts/studies/hybrids/hybrids.ini|1"
    "learned_keys|scripts/studies/learned_keys/learned_keys.ini scripts/studies/learned_keys/learned_keys_check.ini|1"
    "bits|scripts/studies/bits/bits.ini scripts/studies/bits/bits_mid.ini scripts/studies/bits/bits_wider.ini|1"
    "frontier_large|scripts/sweeps/frontier_large.ini|1"
    "bits_large|scripts/studies/bits/bits_large.ini|0"
    "bits_xl|scripts/studies/bits/bits_xl.ini|0"
    "mqar|scripts/studies/mqar/mqar.ini scripts/studies/mqar/mqar_variants.ini|1"
    "kv|scripts/studies/kv/kv.ini|1"
    "trained|scripts/studies/trained/trained.ini|1"
)
# the reports/ folder a study's CSVs live in (main: reports/ itself; reports.sh places modern's)
out_of() {
    case $1 in
        main) echo "." ;;
        bits_large|bits_xl) echo "bits" ;;
        *) echo "$1" ;;
    esac
}

usage() { sed -n '8,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "studies.sh: $*" >&2; exit 2; }

only="" skip="" threads="" dry=0 check=0 list=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --only) [[ $# -ge 2 ]] || die "--only needs a comma-separated list of studies"; only=$2; shift 2 ;;
        --skip) [[ $# -ge 2 ]] || die "--skip needs a comma-separated list of studies"; skip=$2; shift 2 ;;
        --threads) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die "--threads needs a positive integer, got '${2:-}'"
                   threads=$2; shift 2 ;;
        --dry-run) dry=1; shift ;;
        --check) check=1; shift ;;
        --list) list=1; shift ;;
        -h|--help) sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option '$1' (see --help)" ;;
        *) break ;;
    esac
done
[[ -n $only && -n $skip ]] && die "give --only or --skip, not both"
(( dry && check )) && die "give --dry-run or --check, not both"

names=()
for s in "${STUDIES[@]}"; do names+=("${s%%|*}"); done
known() { local n; for n in "${names[@]}"; do [[ $n == "$1" ]] && return 0; done; return 1; }
for n in ${only//,/ } ${skip//,/ }; do known "$n" || die "unknown study '$n' (known: ${names[*]})"; done

if (( list )); then
    for s in "${STUDIES[@]}"; do
        IFS='|' read -r name configs default <<< "$s"
        printf '%-15s %-10s %s\n' "$name" "$([[ $default == 1 ]] && echo default || echo on-request)" "$configs"
    done
    exit 0
fi

memcap=${1:-}
[[ -n $memcap ]] || usage
[[ -x $memcap ]] || die "no memcap binary at '$memcap' (build it: cmake --build build --target memcap)"
memcap=$(cd "$(dirname "$memcap")" && pwd)/$(basename "$memcap")
out=${2:-$root/reports}
[[ -d $out ]] || mkdir -p "$out" 2>/dev/null || die "cannot create the reports folder '$out'"
[[ -w $out ]] || die "cannot write to the reports folder '$out'"
out=$(cd "$out" && pwd)

chosen=()
for s in "${STUDIES[@]}"; do
    IFS='|' read -r name configs default <<< "$s"
    if [[ -n $only ]]; then
        [[ ,$only, == *,$name,* ]] && chosen+=("$s")
    elif [[ $default == 1 && ,$skip, != *,$name,* ]]; then
        chosen+=("$s")
    fi
done
(( ${#chosen[@]} )) || die "no study left to run"

thread_args=()
[[ -n $threads ]] && thread_args=(--threads "$threads")
# `memcap sweep CONFIG ARGS...`'s output; a config memcap refuses stops the command here, before
# any sweep, with memcap's own line (study_sweep NAME CONFIG ARGS...)
study_sweep() {
    local name=$1 c=$2 out
    shift 2
    out=$("$memcap" sweep "$root/$c" "$@" 2>&1) || die "$name: $c: $(grep -m1 -E 'error' <<< "$out" || tail -n1 <<< "$out")"
    printf '%s\n' "$out"
}
if (( check )); then  # each config as memcap reads it, nothing timed (seconds for every study)
    for s in "${chosen[@]}"; do
        IFS='|' read -r name configs default <<< "$s"
        for c in $configs; do
            check_out=$(study_sweep "$name" "$c" --check)
            echo "$name: $c: ${check_out#*: }"
        done
    done
    exit 0
fi

# Each sweep's estimate (s wall), from memcap sweep --dry-run.
declare -A estimate
total_estimate=0
runs=()  # "name|config": the main job is one run (scripts/reports.sh runs both its sweeps), its estimate their sum
for s in "${chosen[@]}"; do
    IFS='|' read -r name configs default <<< "$s"
    for c in $configs; do
        dry_out=$(study_sweep "$name" "$c" --dry-run "${thread_args[@]}")
        line=$(grep -E '^ *estimate:' <<< "$dry_out" || true)
        est=$(sed -nE 's/.* ([0-9.]+(e[+]?[0-9]+)?) s wall.*/\1/p' <<< "$line")
        run=$name\|$c
        [[ $name == main ]] && run="main|${configs// /+}"
        [[ $name == main && ${#runs[@]} -gt 0 && ${runs[-1]} == "$run" ]] || runs+=("$run")
        estimate[$run]=$(awk -v a="${estimate[$run]:-0}" -v b="${est:-0}" 'BEGIN { print a + b }')
        total_estimate=$(awk -v a="$total_estimate" -v b="${est:-0}" 'BEGIN { print a + b }')
        if (( dry )); then echo "$name: $c: $(sed "s/^ *//" <<< "$line")"; fi
    done
done
if (( dry )); then
    echo "studies: ${#runs[@]} runs; their estimates sum to $(printf '%.0f' "$total_estimate") s wall (crossing rounds not counted; the estimates are rough where cells differ in cost by orders of magnitude)"
    exit 0
fi

start=$(date +%s)
fmt() { printf '%d:%02d' $(( $1 / 60 )) $(( $1 % 60 )); }
done_estimate=0
ratios=()  # "ratio weight": measured / estimated and the measured seconds, one per finished run with an estimate
i=0
for r in "${runs[@]}"; do
    IFS='|' read -r name c <<< "$r"
    i=$(( i + 1 ))
    now=$(( $(date +%s) - start ))
    # ETA: the estimate of what is left, scaled by the median ratio once three runs have finished
    left=$(awk -v t="$total_estimate" -v d="$done_estimate" 'BEGIN { print t - d }')
    scale=1
    if (( ${#ratios[@]} >= 3 )); then
        # the weighted median: the smallest ratio at which the runs' weight reaches half the total
        scale=$(printf '%s\n' "${ratios[@]}" | LC_ALL=C sort -g -k1,1 |
                awk '{ r[NR] = $1; w[NR] = $2; total += $2 } END { for (k = 1; k <= NR; ++k) { sum += w[k]; if (2 * sum >= total) { print r[k]; exit } } }')
    fi
    eta=$(awk -v now="$now" -v left="$left" -v r="$scale" 'BEGIN { printf "%d", now + left * r }')
    echo "studies: [$i/${#runs[@]}] $name: $c (elapsed $(fmt "$now"), ETA for all $(fmt "$eta"))" >&2
    if [[ $name == main ]]; then  # the main job: both its sweeps and its report, at once
        "$root/scripts/reports.sh" "$memcap" "$out"
    else
        dir=$out/$(out_of "$name")
        mkdir -p "$dir"
        "$memcap" sweep "$root/$c" --out "$dir" --force "${thread_args[@]}"
    fi
    took=$(( $(date +%s) - start - now ))
    ratio=$(awk -v m="$took" -v e="${estimate[$r]}" 'BEGIN { if (e > 0) printf "%.6g", m / e }')
    [[ -n $ratio ]] && ratios+=("$ratio $took")
    done_estimate=$(awk -v a="$done_estimate" -v b="${estimate[$r]}" 'BEGIN { print a + b }')
done
# every study's summary, theory, tables, figures, REPORT.md, READMEs and pages, from the CSVs just written
if (( ${#runs[@]} > 1 )) || [[ ${runs[0]%%|*} != main ]]; then
    echo "studies: the reports, from the CSVs (scripts/reports.sh --from-csv)" >&2
    "$root/scripts/reports.sh" --from-csv "$memcap" "$out"
fi
echo "studies: done in $(fmt $(( $(date +%s) - start ))) wall" >&2
