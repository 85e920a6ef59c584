#!/usr/bin/env bash
# Budgets in bits on the command line: fp32 is the float budget's memory byte for byte, and a
# race over precisions says what each memory chose and stays within the bits.
#   bash tests/precision_cli.sh build/memcap
set -uo pipefail
memcap=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# 1. --budget-bits 131072 with precision=fp32 is --budget 4096, byte for byte (the CSV; the
#    manifest records the command).
"$memcap" run -m softmax -m linear -m hrr -t assoc_recall --budget 4096 --d 8 --n 64 256 --seeds 3 --quiet \
    --out "$work/floats.csv" || fail "the float run failed"
"$memcap" run -m softmax:precision=fp32 -m linear:precision=fp32 -m hrr:precision=fp32 -t assoc_recall \
    --budget-bits 131072 --d 8 --n 64 256 --seeds 3 --quiet --out "$work/bits.csv" || fail "the bit run failed"
cmp "$work/floats.csv" "$work/bits.csv" || fail "fp32 at 131072 bits differs from 4096 floats"
/usr/bin/python3 - "$work/floats.csv" <<'PY' || fail "state_bits is not 32 x state_floats at fp32"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(int(r["state_bits"]) == 32 * int(r["state_floats"]) for r in rows), rows[0]
PY

# 2. A bit budget races the precision: each memory's choice is printed, and held within the bits
#    (with d = best the cache's beta too, which may be inf: chose d=2,beta=inf,precision=fp32).
"$memcap" run -m softmax -m linear -t assoc_recall --budget-bits 32768 --d best --n 64 --seeds 2 \
    --out "$work/race.csv" 2>"$work/race.err" || fail "the race failed: $(cat "$work/race.err")"
for m in softmax linear; do
    grep -q "memcap: $m on assoc_recall at 1024 floats (32768 bits), n=64: chose d=[0-9]*\(,[a-z]*=[0-9a-z.]*\)*,precision=\(fp32\|bf16\|fp16\|int8\|int4\) (.*held at .*: [0-9]* bits)" \
        "$work/race.err" || fail "no choice of precision printed for $m: $(cat "$work/race.err")"
done
/usr/bin/python3 - "$work/race.csv" <<'PY' || fail "the race's rows break the bit budget or do not name the precision"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 4, len(rows)
for r in rows:
    assert int(r["state_bits"]) <= 32768, r
    assert "precision=" in r["tuned"], r["tuned"]
    p = r["tuned"].split("precision=")[1]
    assert (p == "fp32") == ("precision" not in r["memory_spec"]), r
PY

if ((failures)); then echo "precision_cli: $failures failure(s)"; exit 1; fi
echo "precision_cli: all checks passed"
