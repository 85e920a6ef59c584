// memcap/memories/theory/capacity.hpp — each model's capacity at a budget: the n it holds.
//
// For a model, a query-noise setting and a budget: n*, the (real) n ≥ 1 where the model's
// accuracy at its best width crosses `threshold`, the continuous counterpart of the measured
// n* (scripts/memcap_report/crossing.py). Every model here is a function of real n (the
// candidates' count is an exponent of the winner-take-all integral and the rest pairs a
// Gamma shape or a linear variance term: hrr_recall_real, grid_recall_real,
// cache_recall_real), so no interpolation between integers is needed.
//
// The best width: each model has candidate settings c (widths, and the cache's β), each
// with a largest n it describes (limit_c: B for HRR, d² for the grid, B / 2d pairs for the
// FIFO cache without eviction) and an accuracy A_c(n) taken as falling with n. The model's
// accuracy at n is the envelope max_c A_c(n) over the settings whose limit_c ≥ n (each n
// its own best setting, as the measured frontier races its widths per n), and n* is where
// the envelope crosses: n* = max_c n*_c, n*_c = sup{n ≤ limit_c : A_c(n) ≥ threshold}.
// When the best setting changes with n, n* is therefore the crossing of the setting that
// holds out longest; n*_c = limit_c (the line's `kind` is `limit`) when A_c is still above
// the threshold at its largest n, which happens for the cache (B / 2d pairs, then eviction):
// in the shipped lines at d = 4 without noise at the smallest budgets, d = 8 above them, and
// at d = 16-64 under query noise.
//
// The search: the power-of-two search of capacity_models() first finds the largest n on
// the grid 4, 8, 16, … that passes (CapacityLine::n); n* lies in [n, 2n) (or at a limit
// below 2n). Then each candidate setting passing at n, in order of its accuracy there, is
// crossed by crossing_n (TOMS 748 on log n) from the best n* so far, skipped when it fails
// there (it cannot hold out longer). `memcap theory` writes one line per model, noise
// setting and budget (harness/results/theory_table.hpp).
#pragma once

#include "memories/theory/recall_model.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace memcap::theory {

struct CapacityLine {
    std::optional<std::int64_t> n;  // the power-of-two search: largest n = 4, 8, … passing; empty: not even 4
    int d = 0;                      // the width that gives it
    double beta = 0;                // the cache's β that gives it (0 for other models)
    double accuracy = 0;            // the model's accuracy at n
    std::string widths;             // the widths searched, e.g. "64 32"
    // The continuous capacity (see the header): n* and the setting whose crossing it is.
    double nstar = 0;               // n* ≥ 1 (0: none, only when even n = 1 fails)
    int nstar_d = 0;
    double nstar_beta = 0;          // the cache's β (0 for other models)
    double nstar_accuracy = 0;      // the model's accuracy at n* (the threshold to the root finder's tolerance; above it at a limit)
    bool nstar_at_limit = false;    // n* is the setting's largest n (limit_c), not a crossing
};

/// Where accuracy, taken as falling with n, crosses `threshold` inside [lo, hi]: accuracy(lo) =
/// at_lo ≥ threshold > at_hi = accuracy(hi), 1 ≤ lo < hi. TOMS 748 (Boost.Math) on
/// accuracy(e^x) − threshold in x = log n, until the bracket is at most kCrossingTolerance wide
/// in log n; n is the bracket's midpoint in log n, and [bracket_lo, bracket_hi] the bracket
/// the root finder ended with (accuracy at bracket_lo ≥ threshold > accuracy at bracket_hi,
/// when the model is monotone there).
struct Crossing {
    double n, bracket_lo, bracket_hi;
    int calls;  // accuracy evaluations the root finder made
};
inline constexpr double kCrossingTolerance = 1e-5;
Crossing crossing_n(const std::function<double(double)>& accuracy, double lo, double hi, double threshold, double at_lo,
                    double at_hi);

/// A model's capacity search.
struct CapacityModel {
    std::string memory;  // the backend the model is of (the line's `memory` column)
    std::string model;   // the model's function
    bool extended;       // also searched at budgets beyond the summary's, up to the largest asked
    /// The line at `budget`; sigma_at(d) is the query noise per entry at width d.
    std::function<CapacityLine(std::int64_t budget, double threshold, const std::function<double(int)>& sigma_at,
                               ModelTable& models)>
        search;
    /// What the line assumes, given the query noise at d = B.
    std::function<std::string(double sigma_at_budget)> note;
};

/// The capacity searches, in the order their lines are written (the power-of-two search; each
/// then crosses its candidate settings for n*, as the header says):
///   hrr     D = d = B (the natural size; the only width the model describes); n scanned
///           upward to the first miss (the report's rule for measured capacity); n* ≤ B;
///   linear  the square grid d × d, d a power of two with d² ≤ B (a larger d_φ reads the
///           same), from the largest such d down while a narrower one holds more (one call
///           at twice the best n decides); n by bisection up to d² (the model falls with n);
///           n* over the widths with d² ≥ n, n*_d ≤ d²;
///   softmax d in {4, …, 64} (powers of two), β in {4, 8, …, 128}, n ≤ B / 2d (beyond,
///           the FIFO cache has evicted at least half the pairs: below 0.9 whatever the
///           read). Bisection over n per d, β by climbing from the last β that passed
///           (taking accuracy as unimodal in β; the line's β is the first found to pass,
///           not necessarily the best), widths stopped once B / 2d is no more than the
///           best n. Only at the summary's budgets (cache calls cost 0.1–0.4 s). n* over
///           every width and β (not just the β the climb found), n*_{d,β} ≤ B / 2d.
const std::vector<CapacityModel>& capacity_models();

}  // namespace memcap::theory
