"""memcap's report: REPORT.md, the capacity table and the figures from memcap's CSVs.

    /usr/bin/python3 scripts/report.py REPORTS_DIR          (or: python3 -m memcap_report REPORTS_DIR
                                                             with scripts/ on PYTHONPATH)
    memcap_report.build(REPORTS_DIR)                        the same from Python

Each part of the report is a folder of scripts/studies/ (its section module, sweep configs,
tests; scripts/studies/README.md: the layout and the load -> compute -> render protocol), in the
order of studies.SECTIONS: the main job's frontier, reproduce and essay, and the studies (modern,
streams, deep, bits, chains, abstention, hybrids, learned_keys), each left out when its CSVs are not there.
This package is what they share: common (CSV and manifest reading, measured, the canonical spec
strings, the capacity rule, published names, words, colours and figures, the sections' Context and
run), capacity (the capacity table, the capacity rows, the parts of tasks with slots or variants),
race (the settings the race chose and the ends of their candidates), theory (`memcap theory`
beside the measurements); report puts the sections together; sweep is `memcap report`.
Every number and every sentence is a deterministic function of the CSVs
(no clocks, no randomness); the standard error is the summary's accuracy_se_frac, which
`memcap aggregate` writes; spec parameters are read from the canonical spec strings memcap
writes, never filled in with a default. Input that cannot be reported on (a missing file
or column) is a ReportError: the command prints it as one line, exits with status 2 and
leaves the reports directory as it was.

Reads (written by scripts/reports.sh):
  catalog.json                           `memcap list --json`: memories' names, tasks' capacity axes and
                                         slots (required; the report runs no binary)
  capacity.csv, capacity_summary.csv     the capacity sweep, per seed (the crossings' intervals) and over seeds: the
                                         frontier (rows whose `tuned` column is non-empty:
                                         each memory at its best width, the cache's beta
                                         chosen too) and the essay's fixed-d frame (`tuned`
                                         empty, d = 64)
  capacity.csv.manifest.json             (optional) the sweep's config: tuning seeds, widths
  theory.csv, theory_capacity.csv        `memcap theory` on capacity_summary.csv: the models
                                         of memories/theory.hpp per summary row, and their
                                         capacity lines (optional: without them no theory)
  reproduce/reproduce_cells.csv          per-seed rows of the essay reproduction
  reproduce/reproduction.csv             essay vs measured
  chains/chains_summary.csv,             (optional) the chained-lookup and "nothing fits" studies
  abstention/abstention_summary.csv      (scripts/studies/chains/chains.ini, abstention.ini)
  modern/modern_summary.csv              (optional) today's recurrent memories (scripts/studies/modern/modern.ini)
  streams/streams_summary.csv            (optional) recent_recall, overwrite_recall, salient_recall and
                                         assoc_recall:passes (scripts/studies/streams/streams.ini), with its
                                         manifest streams/streams.csv.manifest.json (race candidates)
  deep/deep_summary.csv                  (optional) TTT and Titans (scripts/studies/deep/deep.ini); FLOPs: deep/costs.csv
  hybrids/hybrids_summary.csv            (optional) a window beside a recurrent state in one budget
                                         (scripts/studies/hybrids/hybrids.ini)
  bits/bits_summary.csv                  (optional) budgets in bits, precision raced (scripts/studies/bits/bits.ini),
                                         beside the frontier in floats and the log2(n!) limit; its manifest
                                         bits/bits.csv.manifest.json (race candidates, widths); needs state_bits
  learned_keys/                          (optional) the learned-keys study (its README.md)
  trained/trained.csv, trained_summary.csv  (optional) every trainable memory trained beside untrained
                                         (scripts/studies/trained/trained.ini): per-seed rows (their
                                         `message`: how each model trained), the summary, the manifest;
                                         trained_curves.csv (optional: the training curves' figure)
Writes:
  capacity_table.csv                     one row per frame, memory, task (and noise) and budget:
    memory_spec         the memory; in the frontier the tuned keys read `best` (softmax:beta=best)
    task, readout       the task's name (with the parameters, other than the noise, in which the
                        sweep's variants of it differ: assoc_recall:passes=2), the readout's name
    budget_floats       floats of state
    capacity_axis       n (stored pairs), lag (lag recall) or L (copying)
    capacity_at_0.9     the old rule of common.capacity: the largest n tried with mean accuracy
                        >= 0.9 (kept: the bits, essay and learned-keys tables, the figures and
                        the widths at capacity still read it); along a lag or L (lag recall,
                        copying), the last before the first miss scanning upward; empty: none
                        tried passes
    largest_tried       the largest n (lag, L) tried
    capacity_exponent   least-squares slope of log n* at 0.9 (along a lag or L: of log
                        capacity) against log budget (same for every budget of one memory and task)
    frame               frontier (widths chosen on tuning seeds) or essay (d = 64 fixed)
    noise               the task's query noise: cosine=1 (none), cosine=C, or noise=SIGMA
    d_at_capacity       the code width of the row at the capacity n (chosen there, in the frontier)
    memory_spec_at_capacity  the memory spec there (with the chosen beta)
    capacity_per_float  capacity_at_0.9 / budget_floats
    n_star_T, n_star_T_lo, n_star_T_hi   (T = 0.9, 0.5, 0.99; along n only) where mean accuracy
                        crosses T, interpolated in log n between the two n tried bracketing it,
                        and its 95% bootstrap interval over the scored seeds (crossing.py);
                        inf: the largest n tried passes (n* beyond it), -inf: the smallest misses
    resolved_0.9        1 when the interval at 0.9 has a half-width <= 5% of n*, else 0
    seeds               scored seeds per n (a range "10-40" where a refined sweep measured more)
  figures/*.png                          the plots REPORT.md shows
  REPORT.md                              "which memory when" first (verdict.py, from every section's
                                         plain rows; its trained frame when trained rows are there), then the frontier (figures, capacity table, theory
                                         residuals, the comparison in words), the essays reproduced, the
                                         essay's frame and the studies
  NAME/README.md                         the README of each study with a template
                                         (scripts/studies/NAME/README.md.in)

Needs Debian's python3-numpy and python3-matplotlib (/usr/bin/python3).
"""
from .common import ReportError  # noqa: F401
from .report import build  # noqa: F401
