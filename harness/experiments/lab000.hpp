// memcap/harness/experiments/lab000.hpp — essay 000's attention laboratory and the worked examples.
//
// Small exact computations with the softmax cache: essay 000's worked example
// (keys [2,0], [0,2], [1.2,0.8], values [10,0], [0,10], [6,4], query [2,0],
// scale 1/√2 → output [8.638, 1.362]), its six lab checks (positive read,
// paired permutation, key collision, two routes, uniform weights, structural
// mask) and essay 004's Kannada example (weights scaled and unscaled). Each
// result names its entry in the published table (published.hpp).
#pragma once

#include <string>
#include <vector>

namespace memcap {

struct LabResult {
    std::string key;       // published-table key
    double measured = 0;   // the computed number (exact claims)
    bool passed = false;   // the check's outcome (check claims)
};

/// Every worked example and lab check, in published-table order.
std::vector<LabResult> run_lab();

}  // namespace memcap
