#!/usr/bin/env python3
"""Compares a memcap CSV (results or summary) or markdown table with its golden copy
under the golden-file policy of tests/golden_reports.sh (see its header for the why).

usage: csv_compare.py GOLDEN NEW [--tie-flips N]
exit status: 0 = equal under the policy, 1 = a difference, 2 = bad usage / unreadable file

Policy, per field:
  * the header, the number of rows, and every string and integer field: exact;
    accuracy_frac, accuracy_mean_frac and chance_frac too (they are ratios of
    integers, computed and printed the same way by every build);
  * target_dist_mean, target_cos_mean and the abstention threshold (results and
    summary), which carry float32 rounding:
        |golden - new| <= 1e-4 * max(1, |golden|, |new|);
  * accuracy_sd_frac, accuracy_se_frac, accuracy_ci95_lo_frac, accuracy_ci95_hi_frac (double
    arithmetic on exact ratios, through libm in the t quantile): only the printed
    6th significant digit may move, |golden - new| <= 2e-5 * max(|golden|, |new|);
  * empty (not measured) must stay empty;
  * tie flips, results CSV only: `correct` may differ in rows whose
    target_dist_mean agrees within its tolerance (the reads are the same to
    rounding, so only decisions at ties changed) and whose accuracy_frac is
    correct / queries; the sum of |change| over the file must be at most N
    (--tie-flips, default 0); each such row is reported;
  * markdown (.md): line by line, exact.
"""
import csv
import sys

FLOAT32_RTOL = 1e-4  # float32 reads: see tests/golden_reports.sh
PRINT_RTOL = 2e-5    # two units of the 6th significant digit
TOLERANT = {"target_dist_mean": lambda a, b: abs(a - b) <= FLOAT32_RTOL * max(1.0, abs(a), abs(b)),
            "target_cos_mean": lambda a, b: abs(a - b) <= FLOAT32_RTOL * max(1.0, abs(a), abs(b)),
            "threshold": lambda a, b: abs(a - b) <= FLOAT32_RTOL * max(1.0, abs(a), abs(b)),
            "threshold_mean": lambda a, b: abs(a - b) <= FLOAT32_RTOL * max(1.0, abs(a), abs(b)),
            "accuracy_sd_frac": lambda a, b: abs(a - b) <= PRINT_RTOL * max(abs(a), abs(b)),
            "accuracy_se_frac": lambda a, b: abs(a - b) <= PRINT_RTOL * max(abs(a), abs(b)),
            "accuracy_ci95_lo_frac": lambda a, b: abs(a - b) <= PRINT_RTOL * max(abs(a), abs(b)),
            "accuracy_ci95_hi_frac": lambda a, b: abs(a - b) <= PRINT_RTOL * max(abs(a), abs(b))}


def close(a, b):
    return TOLERANT["target_dist_mean"](a, b)


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def compare_md(golden, new):
    with open(golden) as f:
        g = f.read().splitlines()
    with open(new) as f:
        n = f.read().splitlines()
    problems = []
    for i in range(max(len(g), len(n))):
        a = g[i] if i < len(g) else "<missing>"
        b = n[i] if i < len(n) else "<missing>"
        if a != b:
            problems.append(f"line {i + 1}: golden {a!r}\n          new    {b!r}")
    return problems, []


def compare_csv(golden, new, tie_flips):
    g, n = read_rows(golden), read_rows(new)
    if not g or not n:
        return ["empty file"], []
    if g[0] != n[0]:
        return [f"header differs:\n  golden {','.join(g[0])}\n  new    {','.join(n[0])}"], []
    header = g[0]
    col = {name: i for i, name in enumerate(header)}
    problems, notes = [], []
    if len(g) != len(n):
        problems.append(f"{len(g) - 1} rows in golden, {len(n) - 1} in new")
    flips = 0
    for line, (rg, rn) in enumerate(zip(g[1:], n[1:]), start=2):
        if len(rg) != len(header) or len(rn) != len(header):
            problems.append(f"line {line}: {len(rg)} fields in golden, {len(rn)} in new, header has {len(header)}")
            continue
        bad = []
        for name, a, b in zip(header, rg, rn):
            if a == b:
                continue
            if name in TOLERANT and a and b:
                try:
                    if TOLERANT[name](float(a), float(b)):
                        continue
                except ValueError:
                    pass
            bad.append(name)
        if not bad:
            continue
        if set(bad) <= {"correct", "accuracy_frac"} and "correct" in bad and "target_dist_mean" in col:
            try:
                cg, cn, q = int(rg[col["correct"]]), int(rn[col["correct"]]), int(rn[col["queries"]])
                dg, dn = rg[col["target_dist_mean"]], rn[col["target_dist_mean"]]
                same_reads = dg != "" and dn != "" and close(float(dg), float(dn))
                consistent = abs(float(rn[col["accuracy_frac"]]) - cn / q) <= 1e-12
            except (ValueError, ZeroDivisionError, KeyError):
                same_reads = consistent = False
            if same_reads and consistent:
                flips += abs(cg - cn)
                notes.append(f"line {line}: tie flip, correct {cg} -> {cn} with target_dist_mean {dg} / {dn} "
                             f"({rg[col['memory_spec']]} {rg[col['task_spec']]} seed {rg[col['seed']]} slot {rg[col['slot']] or '-'})")
                continue
        details = ", ".join(f"{name} {rg[col[name]]!r} -> {rn[col[name]]!r}" for name in bad)
        problems.append(f"line {line}: {details}")
    if flips > tie_flips:
        problems.append(f"`correct` moved by {flips} in rows with unchanged reads, more than the {tie_flips} "
                        "tie flips allowed: decisions changed, not rounding")
    return problems, notes


def main(argv):
    args = [a for a in argv[1:]]
    tie_flips = 0
    if "--tie-flips" in args:
        i = args.index("--tie-flips")
        try:
            tie_flips = int(args[i + 1])
        except (IndexError, ValueError):
            print("csv_compare: --tie-flips needs a count", file=sys.stderr)
            return 2
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    golden, new = args
    try:
        problems, notes = (compare_md(golden, new) if golden.endswith(".md")
                           else compare_csv(golden, new, tie_flips))
    except OSError as e:
        print(f"csv_compare: {e}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"  note {note}")
    for p in problems[:20]:
        print(f"  {p}")
    if len(problems) > 20:
        print(f"  ... and {len(problems) - 20} more")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
