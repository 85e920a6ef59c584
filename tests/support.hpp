// Shared helpers for tests that compare measured accuracies with published ones.
//
// Tolerances come from sampling error. Queries that share one memory are
// correlated, so the standard error of a mean over S seeds is the spread of
// the per-seed accuracies divided by √S (never the binomial count of all
// queries, which would be too small). A published number is itself one such
// estimate from the same protocol, so the difference of the two has standard
// error √2 · SE, and we accept |measured − published| ≤ 3 · √2 · SE (≈ 99.7%
// two-sided). When every seed scores the same (sd = 0, e.g. 100%), SE falls
// back to the binomial floor √(p(1−p)/Q) with p at least 1/Q.
#pragma once

#include "harness/cell.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <string>

namespace memcap::test {

struct Measured {
    double mean = 0;  // mean accuracy over seeds
    double se = 0;    // standard error of that mean
    std::int64_t queries = 0;
};

inline Measured measure(const std::string& memory, const std::string& task, std::int64_t n, int seeds,
                        std::optional<std::int64_t> budget = std::nullopt, int d = 64,
                        const std::string& readout = "auto") {
    std::vector<double> acc;
    Measured m;
    for (int seed = 0; seed < seeds; ++seed) {
        const CellSpec cell{parse_memory_spec(memory), parse_task_spec(task), parse_readout_spec(readout), budget, d, n,
                            static_cast<std::uint64_t>(seed)};
        const CellOutcome o = run_cell(cell);
        REQUIRE(o.ok);
        REQUIRE(o.slots.size() == 1);
        acc.push_back(static_cast<double>(o.slots[0].correct) / static_cast<double>(o.slots[0].queries));
        m.queries += o.slots[0].queries;
    }
    for (double a : acc) m.mean += a / seeds;
    double ss = 0;
    for (double a : acc) ss += (a - m.mean) * (a - m.mean);
    const double sd = std::sqrt(ss / (seeds - 1));
    const double q = static_cast<double>(m.queries);
    const double p = std::clamp(m.mean, 1.0 / q, 1.0 - 1.0 / q);
    m.se = std::max(sd / std::sqrt(static_cast<double>(seeds)), std::sqrt(p * (1 - p) / q));
    return m;
}

/// |measured − published| within 3·√2·SE (see the header comment).
inline void require_reproduces(const Measured& m, double published) {
    const double tol = 3.0 * std::sqrt(2.0) * m.se;
    INFO("measured " << 100 * m.mean << "% ± " << 100 * m.se << " (SE), published " << 100 * published
                     << "%, tolerance ±" << 100 * tol);
    REQUIRE(std::abs(m.mean - published) <= tol);
}

}  // namespace memcap::test
