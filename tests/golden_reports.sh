#!/usr/bin/env bash
# Regenerates the reports of a small config (scripts/sweeps/smoke.ini) and checks
# them against the committed golden files in tests/golden/.
# usage: golden_reports.sh path/to/memcap [--update]
#
# Policy: one comparison, the same in every build and on every x86-64 machine
# (tests/csv_compare.py does it; `ctest -R golden_compare` proves it fails on
# altered copies).
#
#   1. The sweep: smoke.csv against tests/golden/smoke.csv. The header, the row
#      count, every string and integer field (spec strings, budgets, n, seeds,
#      queries, correct, state_floats, status, ...) and the ratios of integers
#      (accuracy_frac, chance_frac) must be equal. target_dist_mean, the one
#      field that carries float32 rounding, must agree to 1e-4 of its scale:
#      |a - b| <= 1e-4 * max(1, |a|, |b|). Why 1e-4: a read is a sum of at most
#      K = 1024 float32 products here (the largest state in smoke.ini), and two
#      builds that order or fuse those sums differently (SSE2 vs AVX-512 + FMA
#      kernels in Eigen, FFTW's and libm's run-time choices) can differ by up to
#      K * 2^-24 = 6.1e-5 of the vectors' scale, plus 1e-5 from printing 6
#      significant digits. That scale is 1 (unit keys, values and candidates),
#      hence max(1, ...): a distance of 1e-6 is itself rounding residue. The
#      typical difference is far smaller: the largest between the native build
#      (AVX-512) and the golden files (SSE2), on the machine they were checked
#      on, was 1e-5.
#      Tie flips: four queries of the smoke sweep (softmax on selective
#      copying, where a content token and the blank after it share a key, so
#      the read weighs them equally) have decision margins of at most 2.4e-7
#      (two float32 ulps of 1); every other native-readout query's margin is at
#      least 3.3e-6 (28 ulps; measured in both builds). Which way those four go
#      is decided by rounding, so `correct` may move, by at most 4 in total
#      over the file, in rows whose target_dist_mean agrees (the same reads:
#      only tie decisions moved) and whose accuracy_frac is correct/queries.
#      Each such row is printed. The native build on that machine moved one.
#   2. The aggregation: `memcap aggregate` of the golden smoke.csv against
#      tests/golden/smoke_summary.csv and smoke.md: strings, counts and means
#      exact, target_dist_mean as above, the standard deviation and confidence
#      bounds (double arithmetic on exact ratios, through libm in the t
#      quantile) to 2e-5 relative (the printed 6th digit), the markdown line by
#      line. Its input being fixed, a tie flip of step 1 cannot propagate into
#      it; when step 1 had none, this run's summary and table are compared too.
#   3. Portable builds only (-DMEMCAP_PORTABLE=ON, read from the sweep's
#      manifest): byte for byte as well. A difference is reported, and fails
#      only with MEMCAP_GOLDEN_BYTES=1: even one portable binary computes other
#      last bits on a CPU with other cache sizes (Eigen's blocking), other FFTW
#      codelets or another libm code path.
#   4. The sweep's manifest records what the bits depend on (build: commit,
#      dirty, build_type, isa, march, compiler, eigen, fftw, ...; machine: cpu;
#      threads, mpi_ranks), and `sweep --resume` refuses the sweep once its
#      recorded build is not this one.
#
# After a deliberate change, run with --update from a portable build and review
# the diff before committing (the golden files are the baseline x86-64 bits).
set -euo pipefail
memcap=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
compare="python3 $here/csv_compare.py"
tie_flips=4   # see above: smoke-sweep queries whose decision margin is within 2 ulps
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$memcap" sweep "$root/scripts/sweeps/smoke.ini" --out "$work" --threads 2 --quiet 2>/dev/null
"$memcap" aggregate "$work/smoke.csv" --out "$work/smoke_summary.csv" --markdown "$work/smoke.md"
isa=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["build"]["isa"])' "$work/smoke.csv.manifest.json")

if [[ ${2:-} == --update ]]; then
    if [[ $isa != "portable x86-64" ]]; then
        echo "golden files are made by a portable build (cmake -DMEMCAP_PORTABLE=ON); this memcap is $isa" >&2
        exit 2
    fi
    cp "$work/smoke.csv" "$work/smoke_summary.csv" "$work/smoke.md" "$here/golden/"
    echo "updated tests/golden/"
    exit 0
fi

status=0
check() {  # check NAME GOLDEN NEW [csv_compare options]
    local name=$1 golden=$2 new=$3 out
    shift 3
    if out=$($compare "$golden" "$new" "$@"); then
        echo "ok   $name${out:+ (within the policy:)}"
    else
        echo "FAIL $name:"
        status=1
    fi
    [[ -z $out ]] || echo "$out"
}
echo "build: $isa"
check "smoke.csv matches tests/golden/smoke.csv" "$here/golden/smoke.csv" "$work/smoke.csv" --tie-flips "$tie_flips"
flipped=$($compare "$here/golden/smoke.csv" "$work/smoke.csv" --tie-flips "$tie_flips" | grep -c "tie flip" || true)

"$memcap" aggregate "$here/golden/smoke.csv" --out "$work/golden_summary.csv" --markdown "$work/golden.md"
check "aggregate of the golden smoke.csv matches tests/golden/smoke_summary.csv" \
    "$here/golden/smoke_summary.csv" "$work/golden_summary.csv"
check "aggregate of the golden smoke.csv matches tests/golden/smoke.md" "$here/golden/smoke.md" "$work/golden.md"
if [[ $flipped == 0 ]]; then
    check "smoke_summary.csv matches tests/golden/smoke_summary.csv" "$here/golden/smoke_summary.csv" "$work/smoke_summary.csv"
    check "smoke.md matches tests/golden/smoke.md" "$here/golden/smoke.md" "$work/smoke.md"
else
    echo "skip this run's smoke_summary.csv and smoke.md: the tie flips above change their accuracy columns"
fi

manifest=$work/smoke.csv.manifest.json
if python3 - "$manifest" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
need = {"build": ["commit", "dirty", "build_type", "isa", "march", "vector_extensions", "compiler", "eigen", "fftw"],
        "machine": ["cpu", "allocator"]}
missing = [f"{k}.{f}" for k, fs in need.items() for f in fs if f not in m.get(k, {})]
missing += [k for k in ("threads", "mpi_ranks") if not isinstance(m.get(k), int)]
# the race's candidates of the sweep's memories only (smoke.ini names six; every memory has its
# precision's candidates)
raced = sorted(m.get("race_candidates", {}).get("memories", {}))
if raced != ["delta", "hrr", "linear", "rotation", "selective", "softmax"]:
    missing.append("race_candidates of the sweep's memories only (got %s)" % raced)
sys.exit(f"manifest lacks {', '.join(missing)}" if missing else 0)
PY
then
    echo "ok   the manifest records build, machine, threads and mpi_ranks"
else
    echo "FAIL the manifest does not record what the bits depend on"
    status=1
fi
cp "$manifest" "$work/manifest.orig"
python3 -c 'import json, sys; p = sys.argv[1]; m = json.load(open(p)); m["build"]["commit"] = "0" * 40
json.dump(m, open(p, "w"), indent=2)' "$manifest"
if "$memcap" sweep "$root/scripts/sweeps/smoke.ini" --out "$work" --resume --quiet 2>"$work/resume.err"; then
    echo "FAIL --resume accepted a sweep started by another build"
    status=1
elif grep -q "another build" "$work/resume.err"; then
    echo "ok   --resume refuses a sweep started by another build"
else
    echo "FAIL --resume of a sweep started by another build: $(cat "$work/resume.err")"
    status=1
fi
mv "$work/manifest.orig" "$manifest"

if [[ $isa == "portable x86-64" ]]; then
    for f in smoke.csv smoke_summary.csv smoke.md; do
        if cmp -s "$work/$f" "$here/golden/$f"; then
            echo "ok   $f is byte-identical to tests/golden/$f (portable build)"
        elif [[ ${MEMCAP_GOLDEN_BYTES:-0} == 1 ]]; then
            echo "FAIL $f is not byte-identical to tests/golden/$f (MEMCAP_GOLDEN_BYTES=1):"
            diff "$here/golden/$f" "$work/$f" | head -20
            status=1
        else
            echo "note $f is not byte-identical to tests/golden/$f (portable build on another CPU; not a failure)"
        fi
    done
fi
exit $status
