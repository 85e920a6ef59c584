#!/usr/bin/env bash
# Measures a sweep's speed-up over ranks on this machine: the same config run as one process on
# one thread, one process on every core, `mpirun -np P` ranks of one thread (P = the cores, then
# twice the cores, oversubscribed), and a Slurm job of P tasks on a one-node cluster started here
# (scripts/slurm/local-cluster.sh; srun --mpi=pmix). Every run must write the one-thread run's
# CSV byte for byte. Prints one line per run (wall time, speed-up and efficiency per core against
# the one-thread run) and writes them to OUT/speedup.csv; docs/sweeps.md turns them into the
# arithmetic for N nodes.
#
# usage: scripts/slurm/speedup.sh [--no-slurm] path/to/memcap CONFIG OUT_DIR
#   (scripts/slurm/speedup.ini is the sweep docs/sweeps.md measured)
# Needs memcap built with MPI (scripts/setup.sh does), OpenMPI, and for the Slurm run root,
# slurm-wlm and munge (skipped with a note without them, or with --no-slurm).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
start=$SECONDS
slurm=1
if [[ ${1:-} == --no-slurm ]]; then slurm=0; shift; fi
die() { echo "speedup: $*" >&2; exit 2; }
[[ $# -eq 3 ]] || die "usage: scripts/slurm/speedup.sh [--no-slurm] path/to/memcap CONFIG OUT_DIR"
memcap=$(realpath "$1") || die "no memcap binary at '$1'"
[[ -x $memcap ]] || die "no memcap binary at '$1'"
config=$(realpath "$2") || die "cannot read config '$2'"
[[ -r $config ]] || die "cannot read config '$2'"
out=$3
mkdir -p "$out" || die "cannot create '$out'"
out=$(realpath "$out")
command -v mpirun >/dev/null || die "mpirun missing (apt-get install openmpi-bin libopenmpi-dev)"
name=$(basename "${config%.*}")
cores=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

rows=()
reference=""
baseline=""
# run LABEL RANKS THREADS COMMAND...: times COMMAND, checks its CSV, records the row
run() {
    local label=$1 ranks=$2 threads=$3
    shift 3
    local dir="$out/$label"
    rm -rf "$dir"
    local t0 t1
    echo "speedup: $label ($ranks x $threads) ..." >&2
    t0=$(date +%s.%N)
    "$@" >"$out/$label.log" 2>&1 || { cat "$out/$label.log" >&2; die "$label failed (log: $out/$label.log)"; }
    t1=$(date +%s.%N)
    local wall
    wall=$(python3 -c "print('%.3f' % max($t1 - $t0, 0.001))")
    local csv="$dir/$name.csv"
    [[ -s $csv ]] || die "$label wrote no $csv"
    if [[ -z $reference ]]; then
        reference=$csv baseline=$wall
    else
        cmp -s "$reference" "$csv" || die "$label: $csv differs from the one-thread run's"
    fi
    local row
    row=$(python3 -c "
w, b, c = $wall, $baseline, $ranks * $threads
print('%s,%d,%d,%.1f,%.2f,%.2f' % ('$label', $ranks, $threads, w, b / w, b / w / min(c, $cores)))")
    rows+=("$row")
    echo "speedup: $row" | sed 's/,/  /g' >&2
}

run one_thread 1 1 "$memcap" sweep "$config" --out "$out/one_thread" --threads 1 --quiet
run threads 1 "$cores" "$memcap" sweep "$config" --out "$out/threads" --threads "$cores" --quiet
run mpirun_np$cores "$cores" 1 mpirun -np "$cores" "$memcap" sweep "$config" --out "$out/mpirun_np$cores" \
    --threads 1 --quiet
run mpirun_np$((2 * cores)) $((2 * cores)) 1 mpirun --oversubscribe -np $((2 * cores)) "$memcap" sweep "$config" \
    --out "$out/mpirun_np$((2 * cores))" --threads 1 --quiet

if (( slurm )); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "speedup: the Slurm run skipped: needs root (slurmd)" >&2
    elif ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
        echo "speedup: the Slurm run skipped: slurm-wlm or munge missing" >&2
    else
        source "$root/scripts/slurm/local-cluster.sh"  # the cluster, in $tmp; stopped on exit
        slurm_job() {
            local job state
            job=$(cd "$tmp/job" && MEMCAP="$memcap" sbatch --parsable --ntasks="$cores" --cpus-per-task=1 \
                --output="$out/slurm-%j.out" "$root/scripts/slurm/sweep.sbatch" "$config" "$out/slurm_srun")
            while :; do
                state=$(squeue -h -j "$job" -o %T 2>/dev/null || true)
                [[ -z $state ]] && break
                sleep 0.2
            done
            cat "$out/slurm-$job.out"
        }
        run slurm_srun "$cores" 1 slurm_job
    fi
fi

{
    echo "run,ranks,threads,wall_s,speedup,efficiency_per_core"
    printf '%s\n' "${rows[@]}"
} >"$out/speedup.csv.tmp"
mv "$out/speedup.csv.tmp" "$out/speedup.csv"
echo "speedup: $out/speedup.csv ($cores cores, $(grep -c . "$reference") CSV lines, every run byte for byte; $((SECONDS - start)) s)" >&2
