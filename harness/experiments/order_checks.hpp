// memcap/harness/experiments/order_checks.hpp — the paired-permutation control on every backend.
//
// For each backend in the table, at its natural size (d = 64) with default
// parameters: write the same 48 pairs in two orders, read the same keys, and
// report the largest difference between the reads. A backend whose table entry
// declares it order-free must agree to rounding (< 1e-4); any other must
// differ (> 1e-2). Not an essay number: `memcap reproduce` writes it to
// order_checks.csv and its own section of REPRODUCTION.md.
#pragma once

#include <string>
#include <vector>

namespace memcap {

struct OrderCheck {
    std::string memory;  // canonical spec
    float largest = 0;   // largest output difference
    bool order_free = false;
    bool as_expected = false;
};

/// The check on every backend in the table, in table order.
std::vector<OrderCheck> order_checks();
std::string order_csv(const std::vector<OrderCheck>& checks);
std::string order_markdown(const std::vector<OrderCheck>& checks);

}  // namespace memcap
