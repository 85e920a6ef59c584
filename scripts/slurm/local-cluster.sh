# Sourced (not run): starts a one-node Slurm cluster on this machine -- munged, slurmctld and
# slurmd by hand, with a minimal slurm.conf, key, sockets, state and logs in a temporary
# directory $tmp (no systemd) -- and exports SLURM_CONF; an EXIT trap stops the daemons it
# started (by pid) and removes $tmp. Used by local-cluster-test.sh and speedup.sh.
# Needs root (slurmd runs jobs as their user), slurm-wlm and munge; the caller checks.
# Expects: set -euo pipefail.
cluster_start=$SECONDS
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
        echo "slurm: FAILED; logs:" >&2
        tail -n 20 "$tmp"/*.log "$tmp"/job/*.out 2>/dev/null >&2 || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

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
echo "slurm: cluster up after $((SECONDS - cluster_start)) s (node $host, ports $ctld_port/$slurmd_port)"

