#!/usr/bin/env bash
# The command-line contract for bad input: exit status 2, exactly one line on
# stderr that names the problem, and no output file created or changed.
# usage: cli_bad_input.sh path/to/memcap
set -u
memcap=$1
work=$(mktemp -d)
mounted=()
trap 'for m in "${mounted[@]}"; do umount "$m"; done; rm -rf "$work"' EXIT
failures=0
prefix=()  # a command to run memcap under (see unprivileged)

# Every file under $work (path, size, mtime) except the captured stdout/stderr:
# a refused command must leave this listing unchanged.
snapshot() { find "$work" -mindepth 1 ! -name stdout ! -name stderr -printf '%p %y %s %T@\n' 2>/dev/null | grep -v ' d ' | sort; }

# Runs memcap without root's power to ignore file modes (CAP_DAC_OVERRIDE), so
# "unreadable" and "not writable" mean the same for root as for anyone else.
unprivileged=()
if [[ $(id -u) -eq 0 ]] && setpriv --bounding-set -dac_override,-dac_read_search true 2>/dev/null; then
    unprivileged=(setpriv --bounding-set -dac_override,-dac_read_search)
fi
cases=0

# expect_bad "what it should mention" memcap-args...
expect_bad() {
    local needle=$1; shift
    local out="$work/out.csv"
    rm -f "$out"*
    cases=$((cases + 1))
    local before; before=$(snapshot)
    "${prefix[@]}" "$memcap" "$@" >"$work/stdout" 2>"$work/stderr"
    local status=$?
    local lines; lines=$(wc -l <"$work/stderr")
    if [[ $status -ne 2 ]]; then echo "FAIL ($*): exit $status, expected 2"; failures=$((failures + 1)); return; fi
    if [[ $lines -ne 1 ]]; then echo "FAIL ($*): $lines lines on stderr"; cat "$work/stderr"; failures=$((failures + 1)); return; fi
    if ! grep -qF -- "$needle" "$work/stderr"; then echo "FAIL ($*): stderr lacks '$needle': $(cat "$work/stderr")"; failures=$((failures + 1)); return; fi
    if compgen -G "$work/out.csv*" >/dev/null; then echo "FAIL ($*): left an output file"; failures=$((failures + 1)); return; fi
    if [[ $(snapshot) != "$before" ]]; then
        echo "FAIL ($*): created or changed a file:"; diff <(echo "$before") <(snapshot)
        failures=$((failures + 1)); return
    fi
    echo "ok   ($*) -> $(cat "$work/stderr")"
}

o="$work/out.csv"
expect_bad "unknown memory 'nope'" run --memory nope --task assoc_recall --n 4 --out "$o"
expect_bad "softmax, linear" run --memory nope --task assoc_recall --n 4 --out "$o"
expect_bad "unknown task 'nope'" run --memory softmax --task nope --n 4 --out "$o"
# a value given twice would run its cells twice (aggregate would count them as more seeds)
expect_bad "--n: '64' is given twice" run --memory softmax --task assoc_recall --n 64 64 --out "$o"
expect_bad "--memory: 'softmax:beta=16' is given twice" run -m softmax -m softmax:beta=16 --task assoc_recall --n 4 --out "$o"
expect_bad "unknown key 'gamma'" run --memory softmax:gamma=2 --task assoc_recall --n 4 --out "$o"
expect_bad "accepted: queries, noise, cosine, control" run --memory softmax --task assoc_recall:foo=1 --n 4 --out "$o"
expect_bad "is not key=value" run --memory softmax:beta --task assoc_recall --n 4 --out "$o"
expect_bad "missing key" run --memory softmax:=1 --task assoc_recall --n 4 --out "$o"
expect_bad "missing memory name" run --memory :beta=1 --task assoc_recall --n 4 --out "$o"
expect_bad "stray ','" run --memory softmax:beta=1, --task assoc_recall --n 4 --out "$o"
expect_bad "given twice" run --memory softmax:beta=1,beta=2 --task assoc_recall --n 4 --out "$o"
expect_bad "'nan' is not a finite number" run --memory softmax:beta=nan --task assoc_recall --n 4 --out "$o"
expect_bad "'-inf' is not a finite number" run --memory softmax:beta=-inf --task assoc_recall --n 4 --out "$o"
expect_bad "'inf' is not a finite number" run --memory softmax:slope=inf --task assoc_recall --n 4 --out "$o"
expect_bad "slope=-1 is out of range (must be >= 0)" run --memory softmax:slope=-1 --task assoc_recall --n 4 --out "$o"
expect_bad "slope: 'nan' is not a finite number" run --memory softmax:slope=nan --task assoc_recall --n 4 --out "$o"
# the KV cache's policies (memories/softmax/kv_policy.hpp): an unknown policy or option, a window
# (sinks, an observation window, KIVI's full-precision window) larger than the budget holds, KIVI's bits
expect_bad "unknown memory 'h3o'" run --memory h3o --task assoc_recall --n 4 --out "$o"
expect_bad "unknown key 'sinks'" run --memory h2o:sinks=4 --task assoc_recall --n 4 --out "$o"
expect_bad "recent=2 is out of range" run --memory h2o:recent=2 --task assoc_recall --n 4 --out "$o"
expect_bad "minimum" run --memory sink_cache:sinks=64 --task assoc_recall --n 4 --d 16 --budget 1024 --out "$o"
expect_bad "minimum" run --memory snapkv:window=64 --task assoc_recall --n 4 --d 16 --budget 1024 --out "$o"
expect_bad "minimum" run --memory kivi:residual=64 --task assoc_recall --n 4 --d 16 --budget 1024 --out "$o"
expect_bad "bits=3 is not one of 2, 4, 8" run --memory kivi:bits=3 --task assoc_recall --n 4 --d 16 --budget 1024 --out "$o"
expect_bad "order=first is not one of interleaved, last" run --memory softmax --task overwrite_recall:order=first --n 4 --out "$o"
expect_bad "out of range" run --memory softmax:beta=-1 --task assoc_recall --n 4 --out "$o"
# today's memories: a decay outside (0, 1], a ridge that is not positive, a step outside its range
expect_bad "gamma=1.5 is out of range (must be > 0, <= 1)" run --memory retnet:gamma=1.5 --task assoc_recall --n 4 --out "$o"
expect_bad "alpha=0 is out of range" run --memory gated_deltanet:alpha=0 --task assoc_recall --n 4 --out "$o"
expect_bad "lambda=-1 is out of range (must be > 0)" run --memory mesanet:lambda=-1 --task assoc_recall --n 4 --out "$o"
expect_bad "beta=3 is out of range (must be > 0, <= 2)" run --memory kda:beta=3 --task assoc_recall --n 4 --out "$o"
expect_bad "a=1.5 is out of range" run --memory rwkv7:a=1.5 --task assoc_recall --n 4 --out "$o"
expect_bad "step=newton is not one of plain, longhorn" run --memory gated_deltanet:step=newton --task assoc_recall --n 4 --out "$o"
expect_bad "minimum" run --memory mesanet --task assoc_recall --n 4 --budget 64 --out "$o"
# the hybrid (memories/hybrid/): an unknown state memory, a share outside [0, 1], a setting its state
# memory does not take, a budget too small for both parts
expect_bad "state=nope is not one of" run --memory hybrid:state=nope --task assoc_recall --n 4 --budget 1024 --out "$o"
expect_bad "share=1.5 is out of range" run --memory hybrid:share=1.5 --task assoc_recall --n 4 --budget 1024 --out "$o"
expect_bad "unknown key 'alpha'" run --memory hybrid:state=linear,alpha=0.9 --task assoc_recall --n 4 --budget 1024 --out "$o"
expect_bad "below its minimum of 256 floats" run --memory hybrid:share=0.5 --task assoc_recall --n 4 --budget 200 --out "$o"
# storage precision and budgets in bits
expect_bad "precision=fp8 is not one of fp32, bf16, fp16, int8, int4" run --memory linear:precision=fp8 --task assoc_recall --n 4 --budget 1024 --out "$o"
expect_bad "--budget-bits: 100 bits is not a multiple of 32" run --memory linear --task assoc_recall --n 4 --budget-bits 100 --out "$o"
expect_bad "--budget-bits: '0' must be at least 1" run --memory linear --task assoc_recall --n 4 --budget-bits 0 --out "$o"
expect_bad "--budget-bits: 'nan' is not an integer" run --memory linear --task assoc_recall --n 4 --budget-bits nan --out "$o"
expect_bad "precision=best chooses the precision at a budget" run --memory linear:precision=best --task assoc_recall --n 4 --out "$o"
expect_bad "--budget-bits: '32768' is given twice" run --memory linear --task assoc_recall --n 4 --budget-bits 32768 32768 --out "$o"
expect_bad "give --budget (floats) or --budget-bits (bits), not both" run --memory linear --task assoc_recall --n 4 --budget 1024 --budget-bits 32768 --out "$o"
expect_bad "budget 1 floats (32 bits) is below its minimum of 2 floats (64 bits)" run --memory linear:precision=bf16 --task assoc_recall --n 4 --d 4 --budget-bits 32 --out "$o"
expect_bad "no candidate width or setting can run at this budget" run --memory softmax --task assoc_recall --n 4 --d best --budget-bits 32 --out "$o"
expect_bad "trains its keys through the memory's backward pass, which differentiates its fp32 state" run --memory linear:precision=int8 --task assoc_recall:vocab=64,keys=learned --n 4 --d 16 --budget 1024 --out "$o"
# the memories that are trained at test time: their rates, shapes and budgets; keys=learned refused
expect_bad "lr=0 is out of range" run --memory ttt_mlp:lr=0 --task assoc_recall --n 4 --out "$o"
expect_bad "lr=1.5 is out of range" run --memory ttt_linear:lr=1.5 --task assoc_recall --n 4 --out "$o"
expect_bad "momentum=1 is out of range" run --memory titans:momentum=1 --task assoc_recall --n 4 --out "$o"
expect_bad "forget: 'nan' is not a finite number" run --memory titans:forget=nan --task assoc_recall --n 4 --out "$o"
expect_bad "depth=5 is out of range" run --memory titans:depth=5 --task assoc_recall --n 4 --out "$o"
expect_bad "batch=0 is out of range" run --memory ttt_linear:batch=0 --task assoc_recall --n 4 --out "$o"
expect_bad "minimum" run --memory titans --task assoc_recall --n 4 --budget 200 --out "$o"
expect_bad "memory 'ttt_mlp' does not declare" run --memory ttt_mlp --task assoc_recall:vocab=8,keys=learned --n 8 --out "$o"
# the trained frame: a memory without a causal backward pass, a task without tokens
expect_bad "which 'hrr' does not declare" run --memory hrr:train=layer --task mqar:vocab=64,length=32 --n 4 --d 16 --out "$o"
expect_bad "train=yes is not one of none, layer" run --memory linear:train=yes --task mqar:vocab=64,length=32 --n 4 --d 16 --out "$o"
expect_bad "--n: '0' must be at least 1" run --memory softmax --task assoc_recall --n 0 --out "$o"
expect_bad "separated by spaces, e.g. --n 4 8 16" run --memory softmax --task assoc_recall --n 4,8,16 --out "$o"
expect_bad "or 'natural' for the backend's natural size" run --memory softmax --task assoc_recall --n 4 --budget natual --out "$o"
# chained lookups, absent queries and the null slot
expect_bad "hops=0 is out of range" run -m linear -t chain_recall:hops=0 --n 16 --out "$o"
expect_bad "hops=16 is too large for n=16" run -m linear -t chain_recall:hops=16 --n 16 --out "$o"
expect_bad "cleanup=item is not one of nearest, none" run -m linear -t chain_recall:cleanup=item --n 16 --out "$o"
expect_bad "needs the memory's own read" run -m rotation -t chain_recall --n 16 --out "$o"
expect_bad "absent=1 is out of range" run -m softmax -t assoc_recall:absent=1 --n 16 --out "$o"
expect_bad "absent=-0.5 is out of range" run -m softmax -t assoc_recall:absent=-0.5 --n 16 --out "$o"
expect_bad "cannot be combined with control=structural_mask" run -m softmax -t assoc_recall:absent=0.5,control=structural_mask --n 16 --out "$o"
expect_bad "needs the memory's own read" run -m linear -t assoc_recall:absent=0.5 --readout probe --n 16 --out "$o"
expect_bad "'nan' is not a finite number" run -m softmax:null=nan -t assoc_recall:absent=0.5 --n 16 --out "$o"
expect_bad "'inf' is not a finite number" run -m softmax:null=inf -t assoc_recall:absent=0.5 --n 16 --out "$o"
expect_bad "budget 64 floats is below its minimum of 128" run -m softmax:null=1 -t assoc_recall --budget 64 --d 32 --n 4 --out "$o"
expect_bad "repeat -m (e.g. -m softmax -m linear)" run --memory softmax,linear --task assoc_recall --n 4 --out "$o"
expect_bad "both set the query noise" run --memory softmax --task assoc_recall:noise=0.1,cosine=0.7 --n 4 --out "$o"
expect_bad "vocab=4 is below n=8" run --memory linear --task assoc_recall:vocab=4 --n 8 --out "$o"
expect_bad "vocab=-1 is out of range" run --memory linear --task assoc_recall:vocab=-1 --n 8 --out "$o"
expect_bad "vocab: '2.5' is not an integer" run --memory linear --task assoc_recall:vocab=2.5 --n 2 --out "$o"
expect_bad "keys=frame needs a vocabulary" run --memory linear --task assoc_recall:keys=frame --n 8 --out "$o"
expect_bad "keys=bogus is not one of random, frame, learned" run --memory linear --task assoc_recall:vocab=8,keys=bogus --n 8 --out "$o"
expect_bad "memory 'rotation' does not declare" run --memory rotation --task assoc_recall:vocab=8,keys=learned --n 8 --out "$o"
expect_bad "it needs the native readout" run --memory linear --readout probe --task assoc_recall:vocab=8,keys=learned --n 8 --out "$o"
expect_bad "control=key_shuffle cannot be combined with keys=learned" run --memory linear --task assoc_recall:vocab=8,keys=learned,control=key_shuffle --n 8 --out "$o"
expect_bad "steps=0 is out of range" run --memory linear --task assoc_recall:vocab=8,keys=learned,steps=0 --n 8 --out "$o"
expect_bad "lr=0 is out of range" run --memory linear --task assoc_recall:vocab=8,keys=learned,lr=0 --n 8 --out "$o"
expect_bad "lr: 'nan' is not a finite number" run --memory linear --task assoc_recall:vocab=8,keys=learned,lr=nan --n 8 --out "$o"
expect_bad "temp=-1 is out of range" run --memory linear --task assoc_recall:vocab=8,keys=learned,temp=-1 --n 8 --out "$o"
expect_bad "content=16 tokens do not fit in a stream of n=8" run --memory softmax --task selective_copying:content=16 --n 8 --out "$o"
expect_bad "ratio=0 is out of range" run --memory linear --task recent_recall:ratio=0 --n 4 --out "$o"
expect_bad "rewrite=1.5 is out of range" run --memory linear --task overwrite_recall:rewrite=1.5 --n 4 --out "$o"
expect_bad "distractors=-1 is out of range" run --memory linear --task salient_recall:distractors=-1 --n 4 --out "$o"
expect_bad "gate=salience is not one of none, all" run --memory linear --task salient_recall:gate=salience --n 4 --out "$o"
expect_bad "gate=best: this parameter has no candidates" run --memory linear --task salient_recall:gate=best --n 4 --out "$o"
expect_bad "passes=0 is out of range" run --memory linear --task assoc_recall:passes=0 --n 4 --out "$o"
expect_bad "coordinate 0 marks a distractor" run --memory linear --task salient_recall --d 1 --n 4 --out "$o"
expect_bad "both set the query noise" run --memory linear --task recent_recall:noise=0.1,cosine=0.5 --n 4 --out "$o"
expect_bad "a slot does not fix the answer" run --memory linear --task recent_recall --readout probe --n 8 --out "$o"
expect_bad "a slot does not fix the answer" run --memory rotation --task overwrite_recall --n 8 --out "$o"
expect_bad "passes=2 cannot be combined with control=structural_mask" run --memory softmax --task assoc_recall:passes=2,control=structural_mask --n 4 --out "$o"
expect_bad "d=1 cannot hold n=8 candidate values" run --memory softmax --task assoc_recall --d 1 --n 8 --out "$o"
expect_bad "more than 80% of this machine" run --memory softmax --task assoc_recall --n 100000000 --seeds 1 --out "$o"
expect_bad "cosine=best: this parameter has no candidates" run --memory hrr --task assoc_recall:cosine=best --n 4 --out "$o"
expect_bad "--d best chooses the width at a budget, and --budget is not given" run --memory softmax --task assoc_recall --n 4 --d best --out "$o"
expect_bad "--budget includes 'natural'" run --memory softmax --task assoc_recall --n 4 --budget natural 1024 --d best --out "$o"
expect_bad "--d: 'bset' is not an integer (or 'best'" run --memory softmax --task assoc_recall --n 4 --d bset --out "$o"
expect_bad "--tuning-seeds: '0' must be at least 1" run --memory softmax --task assoc_recall --n 4 --budget 1024 --d best --tuning-seeds 0 --out "$o"
expect_bad "--n: '-4' must be at least 1" run --memory softmax --task assoc_recall --n -4 --out "$o"
expect_bad "--n: 'four' is not an integer" run --memory softmax --task assoc_recall --n four --out "$o"
expect_bad "does not fit in 64 bits" run --memory softmax --task assoc_recall --n 99999999999999999999 --out "$o"
expect_bad "--seeds: '0' must be at least 1" run --memory softmax --task assoc_recall --n 4 --seeds 0 --out "$o"
expect_bad "--d: '0' must be at least 1" run --memory softmax --task assoc_recall --n 4 --d 0 --out "$o"
expect_bad "--budget: '0' must be at least 1" run --memory softmax --task assoc_recall --n 4 --budget 0 --out "$o"
expect_bad "below its minimum of 128" run --memory softmax --task assoc_recall --n 4 --budget 100 --out "$o"
expect_bad "below its minimum of 64" run --memory linear --task assoc_recall --n 4 --budget 63 --out "$o"
expect_bad "--n is required" run --memory softmax --task assoc_recall --out "$o"
expect_bad "does not exist" run --memory softmax --task assoc_recall --n 4 --out "$work/no/such/dir/out.csv"
expect_bad "unknown readout" run --memory softmax --task assoc_recall --n 4 --readout psychic --out "$o"
expect_bad "unrecognised option" run --memory softmax --task assoc_recall --n 4 --bogus --out "$o"
expect_bad "accepted: --help, --memory" run --memory softmax --task assoc_recall --n 4 --bogus --out "$o"
expect_bad "unexpected argument '64': --d takes one value" run --memory softmax --task assoc_recall --n 4 --d 32 64 --out "$o"
expect_bad "unexpected argument 'foo'" list foo
expect_bad "unexpected argument 'b.csv'" aggregate a.csv b.csv
expect_bad "known: list, run, sweep, aggregate, reproduce, theory" runn
expect_bad "unknown command 'runn'" runn
expect_bad "cannot open" aggregate "$work/missing.csv" --out "$o"

# Sweeps: bad configs and output directories. Nothing may appear in the --out directory.
expect_bad_sweep() {
    local needle=$1; shift
    rm -rf "$work/sw"
    expect_bad "$needle" sweep "$@" --out "$work/sw" --quiet
    if [[ -e "$work/sw" ]]; then echo "FAIL (sweep $*): created the output directory"; failures=$((failures + 1)); fi
}
cfg() { printf '%s\n' "$@" >"$work/c.ini"; echo "$work/c.ini"; }
good=('[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 4')
expect_bad_sweep "does not exist" "$work/none.ini"
expect_bad_sweep "is a directory" "$work"
expect_bad_sweep "has no [block NAME] section" "$(cfg '')"
expect_bad_sweep "has no [block NAME] section" "$(cfg '[sweep]' 'seeds = 2')"
expect_bad_sweep "line 1" "$(cfg '[block b' 'n = 4')"
expect_bad_sweep "duplicate key" "$(cfg "${good[@]}" 'n = 8')"
expect_bad_sweep "unknown key 'memoriez'" "$(cfg '[block b]' 'memoriez = softmax' 'tasks = assoc_recall' 'n = 4')"
expect_bad_sweep "unknown section [blocks b]" "$(cfg '[blocks b]' 'memories = softmax')"
expect_bad_sweep "outside any section" "$(cfg 'seeds = 3' "${good[@]}")"
expect_bad_sweep "key 'tasks' is required" "$(cfg '[block b]' 'memories = softmax' 'n = 4')"
expect_bad_sweep "key 'n' has no value" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n =')"
expect_bad_sweep "unknown memory 'nope'" "$(cfg '[block b]' 'memories = softmax nope' 'tasks = assoc_recall' 'n = 4')"
expect_bad_sweep "unknown key 'gamma'" "$(cfg '[block b]' 'memories = softmax:gamma=1' 'tasks = assoc_recall' 'n = 4')"
expect_bad_sweep "n: '0' must be at least 1" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 0 4')"
expect_bad_sweep "n: 'four' is not an integer" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = four')"
expect_bad_sweep "ends below its start" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 64..4*2')"
expect_bad_sweep "factor of at least 2" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 4..64*1')"
expect_bad_sweep "below its minimum of 128" "$(cfg "${good[@]}" 'budgets = 100')"
expect_bad_sweep "budget_bits: 33 bits is not a multiple of 32" "$(cfg "${good[@]}" 'budget_bits = 33')"
expect_bad_sweep "give budgets (floats) or budget_bits (bits), not both" "$(cfg "${good[@]}" 'budgets = 1024' 'budget_bits = 32768')"
expect_bad_sweep "'nan' is not a finite number" "$(cfg '[block b]' 'memories = softmax:beta=nan' 'tasks = assoc_recall' 'n = 4')"
expect_bad_sweep "seeds: '0' must be at least 1" "$(cfg "${good[@]}" 'seeds = 0')"
expect_bad_sweep "give one count" "$(cfg "${good[@]}" 'seeds = 1 2')"
expect_bad_sweep "unknown readout 'psychic'" "$(cfg "${good[@]}" 'readout = psychic')"
expect_bad_sweep "[sweep]: seeds: '0' must be at least 1" "$(cfg '[sweep]' 'seeds = 0' "${good[@]}")"
expect_bad_sweep "is given twice for memory 'softmax:beta=16'" "$(cfg "${good[@]}" 'readout = auto native')"  # auto is native for softmax: one cell
expect_bad_sweep "appears twice" "$(cfg "${good[@]}" '[block c]' 'memories = softmax:beta=16' 'tasks = assoc_recall' 'n = 2..4')"
expect_bad_sweep "n: '4' is given twice" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 4 4')"
expect_bad_sweep "give the config file"
expect_bad_sweep "--threads: '0' must be at least 1" "$(cfg "${good[@]}")" --threads 0
expect_bad_sweep "--check only checks the config" "$(cfg "${good[@]}")" --check --dry-run
expect_bad_sweep "does not exist" "$work/none.ini" --check
expect_bad_sweep "is below its minimum" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 4' 'budgets = 1')" --check
expect_bad "does not exist" sweep "$(cfg "${good[@]}")" --out "$work/no/such/dir" --quiet
expect_bad "directory '$work/no/such' does not exist" sweep "$(cfg "${good[@]}")" --out "$work/no/such/dir/" --quiet
echo x >"$work/afile"
expect_bad "is not a directory" sweep "$(cfg "${good[@]}")" --out "$work/afile" --quiet
# An existing sweep is never overwritten without --resume.
"$memcap" sweep "$(cfg "${good[@]}")" --out "$work/done" --quiet
cp "$work/done/c.csv" "$work/c.csv.before"
expect_bad "already exists; pass --resume" sweep "$(cfg "${good[@]}")" --out "$work/done" --quiet
cmp -s "$work/c.csv.before" "$work/done/c.csv" || { echo "FAIL: a refused sweep changed the CSV"; failures=$((failures + 1)); }
expect_bad "differs from the one" sweep "$(cfg "${good[@]}" 'seeds = 2')" --out "$work/done" --resume --quiet
# --resume after an edit names the key that changed, with both values
expect_bad "([block b] seeds: '10' then, '2' now)" sweep "$(cfg "${good[@]}" 'seeds = 2')" --out "$work/done" --resume --quiet
expect_bad "--resume continues a sweep and --force starts it afresh" sweep "$(cfg "${good[@]}")" --out "$work/done" --resume --force --quiet
# --force starts an existing sweep afresh (the one rule: results are replaced only when asked)
"$memcap" sweep "$(cfg "${good[@]}" 'seeds = 2')" --out "$work/done" --force --quiet ||
    { echo "FAIL: sweep --force over an existing sweep"; failures=$((failures + 1)); }
[[ $(wc -l <"$work/done/c.csv") -eq 3 && ! -e "$work/done/c.csv.journal" ]] ||
    { echo "FAIL: sweep --force did not replace the sweep"; failures=$((failures + 1)); }

# run --out never replaces an existing file (or its manifest) without --force; with it, does.
"$memcap" run --memory softmax --task assoc_recall --n 4 --seeds 1 --quiet --out "$work/exists.csv"
expect_bad "--out: '$work/exists.csv' already exists; pass --force" run --memory softmax --task assoc_recall --n 4 --seeds 2 --quiet --out "$work/exists.csv"
mv "$work/exists.csv" "$work/exists.keep"
expect_bad "'$work/exists.csv.manifest.json' already exists" run --memory softmax --task assoc_recall --n 4 --seeds 2 --quiet --out "$work/exists.csv"
mv "$work/exists.keep" "$work/exists.csv"
"$memcap" run --memory softmax --task assoc_recall --n 4 --seeds 2 --quiet --out "$work/exists.csv" --force &&
    [[ $(wc -l <"$work/exists.csv") -eq 3 ]] || { echo "FAIL: run --force did not replace the file"; failures=$((failures + 1)); }
# a device is written through, never "existing results"
"$memcap" run --memory softmax --task assoc_recall --n 4 --seeds 1 --quiet --out /dev/stdout >/dev/null ||
    { echo "FAIL: run --out /dev/stdout"; failures=$((failures + 1)); }
[[ -e /dev/stdout.manifest.json ]] && { echo "FAIL: run --out /dev/stdout wrote a manifest in /dev"; failures=$((failures + 1)); }
# a descriptor link whose descriptor is a regular file is written through too, never renamed over
# (/proc/self/fd/1 here: renaming over it fails, where renaming over /dev/stdout would replace the link)
"$memcap" run --memory softmax --task assoc_recall --n 4 --seeds 2 --quiet --out /proc/self/fd/1 >"$work/captured.csv" ||
    { echo "FAIL: run --out /proc/self/fd/1 into a regular file"; failures=$((failures + 1)); }
[[ $(wc -l <"$work/captured.csv") -eq 3 ]] || { echo "FAIL: run --out /proc/self/fd/1 wrote $(wc -l <"$work/captured.csv") lines"; failures=$((failures + 1)); }

# A config that starts with a UTF-8 byte-order mark reads as the same config.
{ printf '\xef\xbb\xbf'; printf '%s\n' "${good[@]}"; } >"$work/bom.ini"
"$memcap" sweep "$work/bom.ini" --out "$work/bom" --quiet 2>"$work/stderr" ||
    { echo "FAIL: a config with a byte-order mark: $(cat "$work/stderr")"; failures=$((failures + 1)); }

# --n and --budget take ranges as a config's n and budgets do
n_values=$("$memcap" run --memory linear --task assoc_recall --n 4..16*2 --budget 256..1024*4 --seeds 1 --quiet |
    /usr/bin/python3 -c 'import csv, sys; print(" ".join(sorted({r["budget_floats"] + ":" + r["n"] for r in csv.DictReader(sys.stdin)})))')
[[ $n_values == "1024:16 1024:4 1024:8 256:16 256:4 256:8" ]] ||
    { echo "FAIL: --n 4..16*2 --budget 256..1024*4 gave '$n_values'"; failures=$((failures + 1)); }
expect_bad "--n: range '16..4*2' ends below its start" run --memory softmax --task assoc_recall --n 16..4*2 --out "$o"
expect_bad "--budget: range '1024..256' ends below its start" run --memory softmax --task assoc_recall --n 4 --budget 1024..256 --out "$o"

# SIGINT or SIGTERM during `run --out`: one line, exit 130/143, no file and no temporary left.
for sig in INT TERM; do
    rm -f "$work/slow.csv"*
    "$memcap" run --memory rotation --task lag_recall --n 80 --seeds 5000 --threads 1 --quiet --out "$work/slow.csv" \
        2>"$work/stderr" &
    pid=$!
    for _ in $(seq 100); do compgen -G "$work/slow.csv.tmp.*" >/dev/null && break; sleep 0.05; done
    kill -$sig $pid
    wait $pid
    status=$?
    want=$([[ $sig == INT ]] && echo 130 || echo 143)
    word=$([[ $sig == INT ]] && echo interrupted || echo terminated)
    if [[ $status -ne $want ]]; then echo "FAIL: SIG$sig during run --out: exit $status, expected $want"; failures=$((failures + 1))
    elif [[ $(wc -l <"$work/stderr") -ne 1 ]] || ! grep -q "memcap: $word after .* cells; nothing written to '$work/slow.csv'" "$work/stderr"; then
        echo "FAIL: SIG$sig during run --out said: $(cat "$work/stderr")"; failures=$((failures + 1))
    elif compgen -G "$work/slow.csv*" >/dev/null; then echo "FAIL: SIG$sig during run --out left $(ls "$work"/slow.csv*)"; failures=$((failures + 1))
    else echo "ok   (SIG$sig during run --out) -> $(cat "$work/stderr")"; fi
done

# The issue's list, case by case, for the backends it names (delta, rotation, selective).
r=(--task assoc_recall --n 4 --out "$o")
expect_bad "'beta' is not key=value" run --memory delta:beta "${r[@]}"
expect_bad "missing key before '=' in '=1'" run --memory delta:=1 "${r[@]}"
expect_bad "missing memory name" run --memory :beta=1 "${r[@]}"
expect_bad "stray ','" run --memory delta:beta=0.5,,phi=proj "${r[@]}"
expect_bad "nothing after ':'" run --memory delta: "${r[@]}"
expect_bad "key 'beta' given twice" run --memory delta:beta=0.5,beta=1 "${r[@]}"
expect_bad "delta': beta=2.5 is out of range (must be > 0, <= 2)" run --memory delta:beta=2.5 "${r[@]}"
expect_bad "'-inf' is not a finite number" run --memory softmax:beta=-inf "${r[@]}"
expect_bad "'+inf' is not a finite number" run --memory delta:beta=+inf "${r[@]}"
expect_bad "'1e999' is not a finite number" run --memory softmax:beta=1e999 "${r[@]}"
expect_bad "rho: 'nan' is not a finite number" run --memory rotation:rho=nan "${r[@]}"
expect_bad "rho: 'inf' is not a finite number" run --memory rotation:rho=inf "${r[@]}"
expect_bad "rho: '-inf' is not a finite number" run --memory selective:rho=-inf "${r[@]}"
expect_bad "rho=1 is out of range (must be >= 0, < 1)" run --memory rotation:rho=1 "${r[@]}"
expect_bad "rho=1.5 is out of range" run --memory rotation:rho=1.5 "${r[@]}"
expect_bad "rho=-0.1 is out of range" run --memory rotation:rho=-0.1 "${r[@]}"
expect_bad "rho=1.01 is out of range (must be > 0, <= 1)" run --memory selective:rho=1.01 "${r[@]}"
expect_bad "rho=0 is out of range" run --memory selective:rho=0 "${r[@]}"
expect_bad "noise: 'nan' is not a finite number" run --memory softmax --task assoc_recall:noise=nan --n 4 --out "$o"
expect_bad "noise: 'inf' is not a finite number" run --memory softmax --task assoc_recall:noise=inf --n 4 --out "$o"
expect_bad "noise: '-inf' is not a finite number" run --memory softmax --task assoc_recall:noise=-inf --n 4 --out "$o"
expect_bad "noise=-0.5 is out of range" run --memory softmax --task assoc_recall:noise=-0.5 --n 4 --out "$o"
expect_bad "queries: '1.5' is not an integer" run --memory softmax --task assoc_recall:queries=1.5 --n 4 --out "$o"
expect_bad "control=bogus is not one of none, shuffled_query" run --memory softmax --task assoc_recall:control=bogus --n 4 --out "$o"
expect_bad "unknown task 'assoc_recal'" run --memory softmax --task assoc_recal --n 4 --out "$o"
expect_bad "memory 'linear' does not" run --memory linear --task assoc_recall:control=structural_mask --n 4 --out "$o"
expect_bad "needs the native readout" run --memory softmax --readout probe --task assoc_recall:control=structural_mask --n 4 --out "$o"
# n, d, budget, seeds: zero (above), negative, non-numeric, beyond 64 bits, beyond the limit
g=(--memory softmax --task assoc_recall)
expect_bad "--n: '1e3' is not an integer" run "${g[@]}" --n 1e3 --out "$o"
expect_bad "--n: '4.5' is not an integer" run "${g[@]}" --n 4.5 --out "$o"
expect_bad "--n: '' is not an integer" run "${g[@]}" --n '' --out "$o"
expect_bad "--n: '200000000' exceeds the limit" run "${g[@]}" --n 200000000 --out "$o"
expect_bad "--d: '-64' must be at least 1" run "${g[@]}" --n 4 --d -64 --out "$o"
expect_bad "--d: 'sixty' is not an integer" run "${g[@]}" --n 4 --d sixty --out "$o"
expect_bad "--d: '18446744073709551616' does not fit in 64 bits" run "${g[@]}" --n 4 --d 18446744073709551616 --out "$o"
expect_bad "--d: '2000000' exceeds the limit" run "${g[@]}" --n 4 --d 2000000 --out "$o"
expect_bad "--budget: '-1' must be at least 1" run "${g[@]}" --n 4 --budget -1 --out "$o"
expect_bad "--budget: 'lots' is not an integer" run "${g[@]}" --n 4 --budget lots --out "$o"
expect_bad "--budget: '9223372036854775808' does not fit in 64 bits" run "${g[@]}" --n 4 --budget 9223372036854775808 --out "$o"
expect_bad "--seeds: '-3' must be at least 1" run "${g[@]}" --n 4 --seeds -3 --out "$o"
expect_bad "--seeds: 'ten' is not an integer" run "${g[@]}" --n 4 --seeds ten --out "$o"
expect_bad "--seeds: '-99999999999999999999' does not fit in 64 bits" run "${g[@]}" --n 4 --seeds -99999999999999999999 --out "$o"
expect_bad "--threads: 'x' is not an integer" run "${g[@]}" --n 4 --threads x --out "$o"
# a budget below each backend's minimum
expect_bad "below its minimum" run --memory delta --task assoc_recall --n 4 --budget 10 --out "$o"
expect_bad "below its minimum" run --memory selective --task assoc_recall --n 4 --budget 1 --out "$o"
expect_bad "readout 'probe': train=0 is out of range" run "${g[@]}" --n 4 --readout probe:train=0 --out "$o"
expect_bad "ridge: 'nan' is not a finite number" run "${g[@]}" --n 4 --readout probe:ridge=nan --out "$o"
expect_bad "--out" run "${g[@]}" --n 4 --out

# aggregate: missing, empty or foreign input; an output directory that does not exist
: >"$work/empty.csv"
printf 'a,b,c\n1,2,3\n' >"$work/foreign.csv"
expect_bad "input '$work/empty.csv': empty, not a memcap results CSV" aggregate "$work/empty.csv" --out "$o"
expect_bad "not a memcap results CSV (no column 'memory_spec')" aggregate "$work/foreign.csv" --out "$o"
"$memcap" run "${g[@]}" --n 4 --seeds 2 --quiet >"$work/results.csv"
{ cat "$work/results.csv"; echo "softmax,assoc_recall,native"; } >"$work/torn.csv"
expect_bad "line 4 has 3 fields, expected 27" aggregate "$work/torn.csv" --out "$o"
expect_bad "directory '$work/no/such' does not exist" aggregate "$work/results.csv" --out "$work/no/such/summary.csv"
expect_bad "directory '$work/nodir' does not exist" aggregate "$work/results.csv" --markdown "$work/nodir/s.md"
expect_bad "give the results CSV" aggregate --out "$o"
# Results joined (two runs that overlap): a (cell, seed) is one measurement. A second row of it that
# differs is refused, naming both lines, the seed and the cell; one that repeats it exactly is
# counted once, with a one-line note (the summary is the one of the rows without the repeats).
{ cat "$work/results.csv"; sed -n '3s/,ok,$/,error,boom/p' "$work/results.csv"; } >"$work/differ.csv"
expect_bad "lines 3 and 4 are both seed 1 of cell softmax:beta=16 | assoc_recall:" aggregate "$work/differ.csv" --out "$o"
expect_bad "but differ" aggregate "$work/differ.csv" --out "$o" --markdown "$work/out.csv.md"
"$memcap" aggregate "$work/results.csv" --out "$work/once_summary.csv" --markdown "$work/once.md"
{ cat "$work/results.csv"; tail -n +2 "$work/results.csv"; } >"$work/twice.csv"
# joined: without the second header (tail -n +2), with it (cat a b), through standard input
for joined in "twice.csv 4" "cat.csv 5" "stdin 5"; do  # the first repeated row's line
    read -r name first <<<"$joined"
    case $name in
        twice.csv) args=("$work/twice.csv") ;;
        cat.csv) cat "$work/results.csv" "$work/results.csv" >"$work/cat.csv"; args=("$work/cat.csv") ;;
        stdin) args=(-) ;;
    esac
    rm -f "$work/joined_summary.csv" "$work/joined.md"
    cat "$work/results.csv" "$work/results.csv" | "$memcap" aggregate "${args[@]}" --out "$work/joined_summary.csv" \
        --markdown "$work/joined.md" >"$work/stdout" 2>"$work/stderr"
    status=$?
    cases=$((cases + 1))
    if [[ $status -ne 0 ]]; then echo "FAIL (aggregate $name): exit $status: $(cat "$work/stderr")"; failures=$((failures + 1))
    elif [[ $(wc -l <"$work/stderr") -ne 1 ]] ||
         ! grep -qF "2 rows repeat an earlier row exactly, counted once (line $first repeats line 2, seed 0" "$work/stderr"; then
        echo "FAIL (aggregate $name): expected a one-line note, got: $(cat "$work/stderr")"; failures=$((failures + 1))
    elif ! cmp -s "$work/joined_summary.csv" "$work/once_summary.csv" || ! cmp -s "$work/joined.md" "$work/once.md"; then
        echo "FAIL (aggregate $name): the summary differs from the one without the repeated rows"
        diff "$work/once_summary.csv" "$work/joined_summary.csv"; failures=$((failures + 1))
    else echo "ok   (aggregate $name) -> $(cat "$work/stderr")"; fi
done

# theory: missing or foreign summary, a per-seed CSV instead of the summary, a bad --max-budget
expect_bad "input '$work/missing.csv': cannot open" theory "$work/missing.csv" --out "$o"
expect_bad "input '$work/empty.csv': empty, not a memcap summary CSV" theory "$work/empty.csv" --out "$o"
expect_bad "no column 'memory_spec'" theory "$work/foreign.csv" --out "$o"
expect_bad "per-seed rows" theory "$work/results.csv" --out "$o"
expect_bad "--max-budget: 'x' is not an integer" theory "$work/results.csv" --max-budget x --out "$o"
expect_bad "--max-budget: '0' must be at least 1" theory "$work/results.csv" --max-budget 0 --out "$o"
expect_bad "give the summary CSV" theory --out "$o"
expect_bad "--out and --capacity name the same file" theory "$work/results.csv" --out "$o" --capacity "$o"
# several summaries: one --out each, in order, no file named twice
expect_bad "2 summaries but 1 --out; give one --out per summary" theory "$work/results.csv" "$work/results.csv" --out "$o"
expect_bad "2 summaries but 0 --out" theory "$work/results.csv" "$work/results.csv"
expect_bad "two --out name the same file" theory "$work/results.csv" "$work/results.csv" --out "$o" --out "$o"
expect_bad "--out '$work/results.csv' is a summary read" theory "$work/results.csv" --out "$work/results.csv"
expect_bad "an --out is empty" theory "$work/results.csv" "$work/results.csv" --out "" --out "$o"
# a summary with no budget has no capacity lines: refused rather than a header-only file
"$memcap" aggregate "$work/results.csv" --out "$work/natural_summary.csv"
cp "$work/natural_summary.csv" "$work/natural_summary2.csv"
expect_bad "(the memories with a recall model) at a budget" theory "$work/natural_summary.csv" --out "$o" --capacity "$work/cap.csv"
expect_bad "'$work/natural_summary.csv', '$work/natural_summary2.csv' have no associative-recall row" theory "$work/natural_summary.csv" \
    "$work/natural_summary2.csv" --out "$o" --out "$work/out.csv.2" --capacity "$work/cap.csv"
# cost: the same inputs refused; a memory this build does not know named with its line
expect_bad "input '$work/missing.csv': cannot open" cost "$work/missing.csv" --out "$o"
expect_bad "input '$work/empty.csv': empty, not a memcap summary CSV" cost "$work/empty.csv" --out "$o"
expect_bad "no column 'memory_spec'" cost "$work/foreign.csv" --out "$o"
expect_bad "per-seed rows" cost "$work/results.csv" --out "$o"
expect_bad "give the summary CSV" cost --out "$o"
sed 's/^softmax,softmax:/nosuch,nosuch:/' "$work/natural_summary.csv" >"$work/unknown_summary.csv"
expect_bad "line 2: unknown memory 'nosuch'" cost "$work/unknown_summary.csv" --out "$o"
expect_bad "the grid (memories x tasks x budgets x n x seeds) has more than 1000000 cells" run "${g[@]}" --n 1 2 3 4 5 6 7 8 9 10 11 --seeds 100000 --out "$o"

# Config files: truly empty (0 bytes), binary garbage, a bad range, an out-of-range spec
: >"$work/zero.ini"
expect_bad_sweep "has no [block NAME] section" "$work/zero.ini"
printf '\x00\xff\x01[\n' >"$work/garbage.ini"
expect_bad_sweep "config '$work/garbage.ini'" "$work/garbage.ini"
expect_bad_sweep "n: '' is not an integer" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall' 'n = 1..')"
expect_bad_sweep "budgets: '-5' must be at least 1" "$(cfg "${good[@]}" 'budgets = -5')"
expect_bad_sweep "d: '99999999999999999999' does not fit in 64 bits" "$(cfg "${good[@]}" 'd = 99999999999999999999')"
expect_bad_sweep "rho=1 is out of range" "$(cfg '[block b]' 'memories = rotation:rho=1' 'tasks = assoc_recall' 'n = 4')"
expect_bad_sweep "noise: 'inf' is not a finite number" "$(cfg '[block b]' 'memories = softmax' 'tasks = assoc_recall:noise=inf' 'n = 4')"
expect_bad_sweep "a [block NAME] has a NAME that is not printable UTF-8" "$(cfg $'[block r\xe9call]' 'memories = softmax' 'tasks = assoc_recall' 'n = 4')"
expect_bad_sweep "[block b] has more than 1000000 cells" "$(cfg '[block b]' 'memories = softmax linear' 'tasks = assoc_recall' 'n = 1..1000000' 'seeds = 1000')"

# Unreadable config, unwritable output directory: file modes, honoured even by root (see unprivileged).
if [[ $(id -u) -ne 0 || ${#unprivileged[@]} -gt 0 ]]; then
    prefix=("${unprivileged[@]}")
    mkdir "$work/ro" && chmod 555 "$work/ro"
    expect_bad "directory '$work/ro' is not writable" run "${g[@]}" --n 4 --out "$work/ro/out.csv"
    expect_bad "not writable" sweep "$(cfg "${good[@]}")" --out "$work/ro" --quiet
    expect_bad "directory '$work/ro' is not writable" aggregate "$work/results.csv" --out "$work/ro/s.csv"
    cfg "${good[@]}" >/dev/null && chmod 000 "$work/c.ini"
    expect_bad "config '$work/c.ini' cannot be read" sweep "$work/c.ini" --out "$work/sw" --quiet
    chmod 000 "$work/results.csv"
    expect_bad "input '$work/results.csv': cannot open for reading" aggregate "$work/results.csv" --out "$o"
    chmod 644 "$work/results.csv" "$work/c.ini"
    prefix=()
else
    echo "FAIL: running as root without setpriv: cannot check unreadable/unwritable cases"; failures=$((failures + 1))
fi

# As root: a read-only file system and a full one (tiny tmpfs mounts).
if [[ $(id -u) -eq 0 ]] && mkdir "$work/rofs" && mount -t tmpfs -o size=64k,ro tmpfs "$work/rofs" 2>/dev/null; then
    mounted+=("$work/rofs")
    expect_bad "directory '$work/rofs' is not writable" run "${g[@]}" --n 4 --out "$work/rofs/out.csv"
    expect_bad "not writable" sweep "$(cfg "${good[@]}")" --out "$work/rofs" --quiet
    mkdir "$work/full" && mount -t tmpfs -o size=16k tmpfs "$work/full" && mounted+=("$work/full")
    dd if=/dev/zero of="$work/full/filler" bs=4k 2>/dev/null  # fills it: ENOSPC
    expect_bad "output '$work/full/out.csv': write failed: No space left on device" run "${g[@]}" --n 4 --out "$work/full/out.csv"
    expect_bad "write failed: No space left on device" aggregate "$work/results.csv" --out "$work/full/s.csv"
    expect_bad "No space left on device" sweep "$(cfg "${good[@]}")" --out "$work/full/sw" --quiet
    [[ -e "$work/full/sw" ]] && { echo "FAIL: a sweep onto a full disk left $work/full/sw"; failures=$((failures + 1)); }
else
    echo "note: not root (or no tmpfs): read-only and full file-system cases checked through /dev/full only"
fi

# Out of memory: a cell that cannot allocate (address space capped at 2.5 GB; HRR at d = 8192
# needs about 2 GB per cell, two at once) stops the run with one line naming the cell, its
# estimated peak and what to lower; exit 2, nothing written. Not under AddressSanitizer: its
# shadow memory needs terabytes of address space, and its allocator aborts where glibc's
# would fail, so the case runs in the plain build only.
if command -v prlimit >/dev/null && prlimit --as=2500000000 true 2>/dev/null &&
    ! grep -qa __asan_init "$memcap"; then  # g++ links libasan.so, clang links the runtime in
    prefix=(prlimit --as=2500000000)
    expect_bad "could not allocate it; lower --threads" run -m hrr -t assoc_recall --budget 16384 --d 8192 --n 4096 --seeds 2 --threads 2 --quiet --out "$work/out.csv"
    prefix=()
fi

# Not bad input: a file name that is not UTF-8 (found by fuzzing: the JSON manifest threw, exit 1).
"$memcap" run "${g[@]}" --n 4 --seeds 1 --quiet --out "$work/"$'r\xe9sultats.csv' 2>"$work/stderr" ||
    { echo "FAIL: a non-UTF-8 --out path: $(cat "$work/stderr")"; failures=$((failures + 1)); }

# An existing output is never touched by a failing run.
echo "precious" >"$work/keep.csv"
"$memcap" run --memory nope --task assoc_recall --n 4 --out "$work/keep.csv" 2>/dev/null
if [[ $(cat "$work/keep.csv") != precious ]]; then echo "FAIL: a failing run changed an existing file"; failures=$((failures + 1)); fi

# A full disk: the run fails with status 2 and leaves nothing half-written.
if [[ -w /dev/full ]]; then
    "$memcap" run --memory softmax --task assoc_recall --n 4 --quiet >/dev/full 2>"$work/stderr"
    status=$?
    if [[ $status -ne 2 ]]; then echo "FAIL: writing to /dev/full exited $status"; failures=$((failures + 1)); else echo "ok   (stdout is /dev/full) -> $(cat "$work/stderr")"; fi
fi

if [[ $failures -ne 0 ]]; then echo "$failures bad-input case(s) failed"; exit 1; fi
echo "all $cases bad-input cases passed"
