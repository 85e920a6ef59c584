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

tmp=$(mktemp -d /tmp/memcap-slurm.XXXXXX)
chmod 755 "$tmp"  # munged refuses group/world-writable directories
pids=()
cleanup() {
    local status=$?
    for ((i = ${#pids[@]} - 1; i >= 0; --i)); do kill "${pids[i]}" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [[ $status -ne 0 ]]; then
        echo "local-cluster-test: FAILED; logs:" >&2
        tail -n 20 "$tmp"/*.log "$tmp"/job/*.out 2>/dev/null >&2 || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# Default sweep: cells big enough (~0.05-0.15 s) that both ranks get some.
if [[ -z $config ]]; then
    config=$tmp/mid.ini
    printf '%s\n' '[block mid]' 'memories = softmax linear' 'tasks = assoc_recall' 'n = 8192..32768*2' 'seeds = 3' >"$config"
fi
config=$(realpath "$config")
name=$(basename "${config%.*}")

# --- munge: its own key and socket
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge.key"
munged --foreground --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" --pid-file="$tmp/munged.pid" \
    --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" 2>>"$tmp/munged.log" &
pids+=($!)
for _ in $(seq 50); do [[ -S $tmp/munge.sock ]] && break; sleep 0.1; done
[[ -S $tmp/munge.sock ]] || { echo "munged did not start"; exit 1; }

# --- slurm.conf: one node (this machine), one partition, free ports
read -r ctld_port slurmd_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/job"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=memcaptest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=memcap Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >>"$tmp/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >>"$tmp/slurmd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && break
    sleep 0.2
done
sinfo -h -o %t | grep -qE '^(idle|mix|alloc)' || { echo "the node did not come up"; sinfo; exit 1; }
echo "local-cluster-test: cluster up after $((SECONDS - start)) s (node $host, ports $ctld_port/$slurmd_port)"

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
