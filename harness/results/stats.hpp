// memcap/harness/results/stats.hpp — the one place for statistics over seeds and the verdict rule.
//
// Queries that share one memory are correlated, so the spread that matters is
// the spread of per-seed accuracies across seeds, not the binomial count of all
// queries. `aggregate`, `reproduce` and the tests all summarise through here.
//
//   mean  = Σ x / S
//   sd    = √(Σ (x − mean)² / (S − 1))            (0 for one seed)
//   95% interval: mean ± t₀.₉₇₅(S − 1) · sd / √S  (none for one seed)
//
// For per-seed fractions of q queries (SummaryOptions::binomial_queries = q),
// sd is at least the binomial sd of one seed, √(p(1 − p)/q) with p clamped to
// [1/q, 1 − 1/q]: when every seed scores the same (e.g. 100%), the interval
// still reflects that only q queries were asked.
//
// The standard error of a mean accuracy (the one rule: `aggregate`'s
// accuracy_se_frac, the theory table's residuals, the race on tuning seeds, the
// reports) applies that floor to the seeds' sd:
//
//   se = max(sd, √(p(1 − p)/q)) / √S,   p = mean clamped to [1/q, 1 − 1/q],
//
// S the seeds that ran and q their queries per seed.
//
// The verdict rule: a published number P_pub, itself an estimate from P seeds
// of the same protocol, is reproduced by a measured mean over S seeds when
//
//   |mean − P_pub| ≤ 3 · sd · √(1/S + 1/P) + unit
//
// (≈ 99.7% two-sided), `unit` being half of the last digit the source printed.
#pragma once

#include <vector>

namespace memcap {

struct Summary {
    int count = 0;
    double mean = 0, sd = 0;
    double lo = 0, hi = 0;  // 95% t interval; NaN for a single value
    double se() const;      // sd / √count
};

struct SummaryOptions {
    double binomial_queries = 0;  // > 0: x are fractions of this many queries (binomial floor on sd)
    bool clip_to_unit = false;    // clip the interval to [0, 1] (fractions)
};

/// Mean, sd and 95% t interval of `x` (which must not be empty).
Summary summarise(const std::vector<double>& x, const SummaryOptions& options = {});

/// One seed's binomial sd over q queries, √(p(1 − p)/q), p = mean clamped to [1/q, 1 − 1/q]
/// (to 1/2 when q < 2: a single read's sd is at most 1/2).
double binomial_sd(double mean, double queries);
/// The standard error of a mean accuracy over `seeds` seeds of `queries_per_seed` queries each
/// (header): max(sd, binomial_sd(mean, q)) / √seeds.
double accuracy_standard_error(double mean, double sd, double seeds, double queries_per_seed);

/// 3 · sd · √(1/S + 1/P) + unit: how far a measured mean may lie from a number published from P seeds.
double reproduction_tolerance(const Summary& measured, int published_seeds, double unit = 0.0);
/// True when |measured.mean − published| is within reproduction_tolerance.
bool reproduces(const Summary& measured, double published, int published_seeds, double unit = 0.0);

}  // namespace memcap
