#!/usr/bin/env bash
# `memcap sweep` gives byte-identical CSV at 1 and 2 threads, the same rows as
# the equivalent `memcap run`, and a manifest beside the CSV.
# usage: sweep_threads.sh path/to/memcap path/to/smoke.ini
set -euo pipefail
memcap=$1 config=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$memcap" sweep "$config" --out "$work/t1" --threads 1 --quiet
"$memcap" sweep "$config" --out "$work/t2" --threads 2 --quiet
cmp "$work/t1/smoke.csv" "$work/t2/smoke.csv"
[[ -s "$work/t1/smoke.csv.manifest.json" ]] || { echo "FAIL: no manifest"; exit 1; }
[[ ! -e "$work/t1/smoke.csv.journal" ]] || { echo "FAIL: journal left behind"; exit 1; }
[[ ! -e "$work/t1/smoke_race.csv" ]] || { echo "FAIL: a race file for a sweep that chooses nothing"; exit 1; }
rows=$(($(wc -l <"$work/t1/smoke.csv") - 1))
[[ $rows -eq 302 ]] || { echo "FAIL: $rows rows, expected 302"; exit 1; }

# The first block of smoke.ini is this `memcap run` grid: same rows, same order.
"$memcap" run -m softmax -m linear -t assoc_recall --d 32 --budget 1024 natural --n 4 16 64 --seeds 3 -q >"$work/run.csv"
head -n 37 "$work/t1/smoke.csv" | cmp - "$work/run.csv"
echo "sweep CSV identical at 1 and 2 threads ($rows rows) and equal to memcap run"
