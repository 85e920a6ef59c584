// memcap/harness/results/aggregate.hpp — summarising per-seed rows over seeds.
//
// Reads a results CSV (columns by name, results/csv.hpp) and writes one row per group
// (memory_spec, task_spec, readout, budget_floats, d, n, slot, tuned) in order of
// first appearance (`tuned` keeps a frontier cell whose width was chosen apart from
// the same cell run at that width fixed): number of seeds, mean accuracy over seeds, its standard
// deviation across seeds, and a 95% interval mean ± t₀.₉₇₅(S−1) · sd / √S.
// Queries sharing one memory are correlated, so the spread is taken across
// seeds, not from the binomial count of queries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memcap {

struct GroupSummary {
    std::string memory_spec, task_spec, readout, budget_floats, slot, tuned;
    std::string d, n;
    std::int64_t state_floats = 0;
    std::optional<std::int64_t> state_bits;  // none: the results CSV has no state_bits column
    std::optional<std::int64_t> param_floats;  // none: the results CSV has no param_floats column
    std::int64_t seeds = 0, errors = 0, queries = 0;
    /// se: the standard error with the binomial floor (stats.hpp), over the seeds that ran.
    double mean = 0, sd = 0, se = 0, ci_lo = 0, ci_hi = 0, chance = 0, dist_mean = 0, cos_mean = 0;
    /// A column measured on some rows only (the abstention columns): mean and 95% interval over
    /// the seeds that have it; `count` = 0 when none has (the summary's columns stay empty).
    struct Optional {
        int count = 0;
        double mean = 0, lo = 0, hi = 0;
    };
    Optional threshold, false_accept, present_accept, balanced, auc;
};

/// Reads a results CSV; UsageError when it is missing, unreadable or not memcap output.
/// Each (cell, seed) counts once: a row that repeats an earlier row of its cell and seed
/// exactly (files that overlap, joined) is skipped, and `note`, when given, receives one line
/// saying how many were; a row that shares a cell and seed with an earlier one but differs
/// is a UsageError naming both lines, the cell and the seed. A line equal to the header is
/// skipped (files joined with `cat`).
std::vector<GroupSummary> summarise_csv(const std::string& path, std::string* note = nullptr);
std::string summary_csv(const std::vector<GroupSummary>& groups);
/// A Markdown table of mean accuracy (%) with one row per memory, readout, d and
/// budget and one column per n, for each task; tasks with slots show the mean of
/// the per-slot accuracies (copying's number).
std::string summary_markdown(const std::vector<GroupSummary>& groups);

}  // namespace memcap
