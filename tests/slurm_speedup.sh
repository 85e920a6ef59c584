#!/usr/bin/env bash
# scripts/slurm/speedup.sh on a sweep of a second (--no-slurm: the Slurm path is
# slurm_local_cluster's): every launcher's CSV the one-thread run's bytes (the script checks),
# one row a run in speedup.csv; and bad input exits 2 with one line, writing no speedup.csv.
set -euo pipefail
memcap=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' '[block b]' 'memories = softmax linear' 'tasks = assoc_recall' 'n = 64 128' 'seeds = 4' 'budgets = 1024' >"$tmp/tiny.ini"
bash "$root/scripts/slurm/speedup.sh" --no-slurm "$memcap" "$tmp/tiny.ini" "$tmp/out" 2>"$tmp/log" ||
    { cat "$tmp/log"; echo "FAIL: speedup.sh failed"; exit 1; }
rows=$(tail -n +2 "$tmp/out/speedup.csv" | cut -d, -f1 | tr '\n' ' ')
[[ $rows == "one_thread threads mpirun_np$(nproc) mpirun_np$((2 * $(nproc))) " ]] ||
    { echo "FAIL: speedup.csv runs: $rows"; exit 1; }
[[ $(head -1 "$tmp/out/speedup.csv") == "run,ranks,threads,wall_s,speedup,efficiency_per_core" ]] ||
    { echo "FAIL: header"; exit 1; }
# bad input: one line, status 2, nothing written
for args in "$memcap $tmp/missing.ini $tmp/bad" "$tmp/no-memcap $tmp/tiny.ini $tmp/bad" "$memcap $tmp/tiny.ini"; do
    set +e
    bash "$root/scripts/slurm/speedup.sh" --no-slurm $args >"$tmp/out.txt" 2>"$tmp/err.txt"
    status=$?
    set -e
    [[ $status -eq 2 ]] || { echo "FAIL: '$args' exited $status"; cat "$tmp/err.txt"; exit 1; }
    [[ $(wc -l <"$tmp/err.txt") -eq 1 ]] || { echo "FAIL: '$args' printed:"; cat "$tmp/err.txt"; exit 1; }
    [[ ! -e $tmp/bad/speedup.csv ]] || { echo "FAIL: '$args' wrote speedup.csv"; exit 1; }
done
echo "slurm_speedup: passed ($rows)"
