// memcap/memories/theory/capacity.hpp — each model's capacity at a budget: the largest n it holds.
//
// For a model, a query-noise setting and a budget: the largest n on the power-of-two grid
// 4, 8, 16, … whose model accuracy is at least `threshold` at the model's best width
// (the searches are described at capacity_models()). `memcap theory` writes one line per
// model, noise setting and budget (harness/results/theory_table.hpp).
#pragma once

#include "memories/theory/recall_model.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace memcap::theory {

struct CapacityLine {
    std::optional<std::int64_t> n;  // empty: not even n = 4
    int d = 0;                      // the width that gives it
    double beta = 0;                // the cache's β that gives it (0 for other models)
    double accuracy = 0;            // the model's accuracy at n
    std::string widths;             // the widths searched, e.g. "64 32"
};

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

/// The capacity searches, in the order their lines are written:
///   hrr     D = d = B (the natural size; the only width the model describes); n scanned
///           upward to the first miss (the report's rule for measured capacity);
///   linear  the square grid d × d, d a power of two with d² ≤ B (a larger d_φ reads the
///           same), from the largest such d down while a narrower one holds more (one call
///           at twice the best n decides); n by bisection up to d² (the model falls with n);
///   softmax d in {4, …, 64} (powers of two), β in {4, 8, …, 128}, n ≤ B / 2d (beyond,
///           the FIFO cache has evicted at least half the pairs: below 0.9 whatever the
///           read). Bisection over n per d, β by climbing from the last β that passed
///           (taking accuracy as unimodal in β; the line's β is the first found to pass,
///           not necessarily the best), widths stopped once B / 2d is no more than the
///           best n. Only at the summary's budgets (cache calls cost 0.1–0.4 s).
const std::vector<CapacityModel>& capacity_models();

}  // namespace memcap::theory
