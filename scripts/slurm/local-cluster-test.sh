#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this machine (munged, slurmctld, slurmd,
# a minimal slurm.conf, all in a temporary directory; no systemd), submits
# scripts/slurm/sweep.sbatch with 2 MPI ranks, checks its CSV byte for byte
# against a single-process run, and stops the daemons it started (by pid).
# Needs root (slurmd runs jobs as their user) and Debian's slurm-wlm, munge
# and OpenMPI (MEMCAP_TEST_DEPS=1 scripts/setup.sh installs them; scripts/test.sh does).
# usage: scripts/slurm/local-cluster-test.sh [path/to/memcap] [CONFIG]  (default: 18 mid-sized cells)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
memcap=$(realpath "${1:-$root/build/memcap}")
config=${2:-}
start=$SECONDS
# Exit status 77 (ctest: skipped) when this machine cannot host the cluster.
[[ $(id -u) -eq 0 ]] || { echo "local-cluster-test: skipped: needs root (slurmd)"; exit 77; }
for tool in munged slurmctld slurmd sbatch python3; do
    command -v $tool >/dev/null || { echo "local-cluster-test: skipped: $tool missing (MEMCAP_TEST_DEPS=1 scripts/setup.sh installs slurm-wlm munge)"; exit 77; }
done

source "$root/scripts/slurm/local-cluster.sh"  # the cluster, in $tmp; stopped on exit

# Default sweep: cells big enough (~0.05-0.15 s) that both ranks get some.
if [[ -z $config ]]; then
    config=$tmp/mid.ini
    printf '%s\n' '[block mid]' 'memories = softmax linear' 'tasks = assoc_recall' 'n = 8192..32768*2' 'seeds = 3' >"$config"
fi
config=$(realpath "$config")
name=$(basename "${config%.*}")

# --- the job: 2 ranks x 1 thread, then a reference run in one process
cd "$tmp/job"
job=$(MEMCAP="$memcap" sbatch --parsable --ntasks=2 --cpus-per-task=1 --output="$tmp/job/slurm-%j.out" \
    "$root/scripts/slurm/sweep.sbatch" "$config" "$tmp/job/out")
echo "local-cluster-test: submitted job $job"
for _ in $(seq 600); do
    state=$(squeue -h -j "$job" -o %T 2>/dev/null || true)
    [[ -z $state ]] && break
    sleep 0.2
done
[[ -z $state ]] || { echo "job $job still $state after 2 minutes"; exit 1; }
cat "$tmp/job/slurm-$job.out"
[[ -s "$tmp/job/out/$name.csv" ]] || { echo "job $job wrote no CSV"; exit 1; }
grep -qE "cells computed per rank: 0:[1-9][0-9]* 1:[1-9][0-9]*$" "$tmp/job/slurm-$job.out" ||
    { echo "job $job did not spread its cells over 2 MPI ranks"; exit 1; }
"$memcap" sweep "$config" --out "$tmp/job/ref" --quiet
cmp "$tmp/job/ref/$name.csv" "$tmp/job/out/$name.csv"
echo "local-cluster-test: passed: srun --mpi=pmix with 2 ranks gives the single-process CSV ($(($(wc -l <"$tmp/job/out/$name.csv") - 1)) rows); took $((SECONDS - start)) s"
