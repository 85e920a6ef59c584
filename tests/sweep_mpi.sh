#!/usr/bin/env bash
# `mpirun -np K memcap sweep` writes the same CSV, byte for byte, as one
# process, and the cells really are spread over the ranks.
# usage: sweep_mpi.sh path/to/memcap path/to/mpirun path/to/smoke.ini
set -euo pipefail
memcap=$1 mpirun=$2 smoke=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# OpenMPI refuses root without these; single-copy (CMA) is often barred in containers.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

"$memcap" sweep "$smoke" --out "$work/one" --quiet
"$mpirun" -np 2 "$memcap" sweep "$smoke" --out "$work/np2" --quiet
cmp "$work/one/smoke.csv" "$work/np2/smoke.csv"
echo "ok   smoke.ini: -np 2 identical to one process"

# Cells big enough (~0.05-0.15 s) that every rank gets some.
cat >"$work/mid.ini" <<'INI'
[block mid]
memories = softmax linear
tasks = assoc_recall
n = 8192..32768*2
seeds = 3
INI
"$memcap" sweep "$work/mid.ini" --out "$work/one" --quiet --threads 2
for np in 2 3; do
    "$mpirun" -np $np "$memcap" sweep "$work/mid.ini" --out "$work/np$np" --threads 1 2>"$work/np$np.stderr"
    cmp "$work/one/mid.csv" "$work/np$np/mid.csv"
    line=$(grep "cells computed per rank" "$work/np$np.stderr")
    for ((r = 0; r < np; ++r)); do
        [[ $line =~ " $r:"([0-9]+) ]] && ((BASH_REMATCH[1] > 0)) || { echo "FAIL: rank $r computed no cell: $line"; exit 1; }
    done
    echo "ok   mid.ini: -np $np identical to one process ($line)"
done

# Width chosen per memory (d = best): the tuning cells are shared over the ranks and the
# choices, hence the CSV, are the same as one process makes.
cat >"$work/best.ini" <<'INI'
[block best]
memories = softmax:beta=best hrr
tasks = assoc_recall
budgets = 1024
n = 32 128
seeds = 2
d = best
tuning_seeds = 3
INI
"$memcap" sweep "$work/best.ini" --out "$work/one" --quiet --threads 2
for np in 2 3; do
    "$mpirun" -np $np "$memcap" sweep "$work/best.ini" --out "$work/np$np" --quiet --threads 1
    cmp "$work/one/best.csv" "$work/np$np/best.csv"
    cmp "$work/one/best_race.csv" "$work/np$np/best_race.csv"
    echo "ok   best.ini (d = best): -np $np identical to one process"
done
