// Shared helpers for tests that compare measured accuracies with published ones.
//
// Tolerances come from sampling error. Queries that share one memory are
// correlated, so the spread that matters is the spread of per-seed accuracies
// across seeds (sd), not the binomial count of all queries. A measured mean
// over S seeds has standard error sd/√S. A published number is itself an
// estimate from P seeds of the same protocol (essay 004 Part 3: 20 memories;
// Part 1: one rotation and one set of codes, so P = 1), with standard error
// sd/√P. We accept
//
//     |measured − published| ≤ 3 · √(sd²/S + sd²/P)        (≈ 99.7%, two-sided)
//
// When every seed scores the same (sd = 0, e.g. 100%), sd falls back to the
// binomial floor √(p(1−p)/q) of one seed's q queries, with p at least 1/q.
#pragma once

#include "harness/eval/cell.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

namespace memcap::test {

struct Measured {
    double mean = 0;  // mean accuracy over seeds
    double sd = 0;    // spread across seeds (with the binomial floor)
    int seeds = 0;
    double se() const { return sd / std::sqrt(static_cast<double>(seeds)); }
};

inline Measured summarise(const std::vector<double>& acc, double queries_per_seed) {
    Measured m;
    m.seeds = static_cast<int>(acc.size());
    for (double a : acc) m.mean += a / m.seeds;
    double ss = 0;
    for (double a : acc) ss += (a - m.mean) * (a - m.mean);
    const double p = std::clamp(m.mean, 1.0 / queries_per_seed, 1.0 - 1.0 / queries_per_seed);
    m.sd = std::max(m.seeds > 1 ? std::sqrt(ss / (m.seeds - 1)) : 0.0, std::sqrt(p * (1 - p) / queries_per_seed));
    return m;
}

struct Run {
    Run(std::string memory_, std::string task_ = "assoc_recall", std::int64_t n_ = 64, int seeds_ = 20,
        std::optional<std::int64_t> budget_ = std::nullopt, int d_ = 64, std::string readout_ = "auto")
        : memory(std::move(memory_)), task(std::move(task_)), n(n_), seeds(seeds_), budget(budget_), d(d_),
          readout(std::move(readout_)) {}
    std::string memory, task;
    std::int64_t n;
    int seeds;
    std::optional<std::int64_t> budget;
    int d;
    std::string readout;
};

/// Per-seed accuracies by slot (slot −1 for slot-free tasks) and queries per seed and slot.
inline std::map<int, std::pair<std::vector<double>, double>> per_seed(const Run& r) {
    std::map<int, std::pair<std::vector<double>, double>> out;
    for (int seed = 0; seed < r.seeds; ++seed) {
        const CellSpec cell{parse_memory_spec(r.memory), parse_task_spec(r.task), parse_readout_spec(r.readout),
                            r.budget, r.d, r.n, static_cast<std::uint64_t>(seed)};
        const CellOutcome o = run_cell(cell);
        INFO(o.message);
        REQUIRE(o.ok);
        for (const auto& s : o.slots) {
            out[s.slot].first.push_back(static_cast<double>(s.correct) / static_cast<double>(s.queries));
            out[s.slot].second = static_cast<double>(s.queries);
        }
    }
    return out;
}

/// Accuracy of a slot-free task.
inline Measured measure(const Run& r) {
    const auto by_slot = per_seed(r);
    REQUIRE(by_slot.size() == 1);
    return summarise(by_slot.begin()->second.first, by_slot.begin()->second.second);
}

/// Accuracy per slot (lag, position).
inline std::map<int, Measured> measure_slots(const Run& r) {
    std::map<int, Measured> out;
    for (const auto& [slot, acc] : per_seed(r)) out[slot] = summarise(acc.first, acc.second);
    return out;
}

/// Per seed, the mean accuracy over all slots (the essay's copying number).
inline Measured measure_slot_mean(const Run& r) {
    const auto by_slot = per_seed(r);
    std::vector<double> mean(static_cast<std::size_t>(r.seeds), 0.0);
    double queries = 0;
    for (const auto& [slot, acc] : by_slot) {
        for (std::size_t s = 0; s < mean.size(); ++s) mean[s] += acc.first[s] / static_cast<double>(by_slot.size());
        queries += acc.second;
    }
    return summarise(mean, queries);
}

/// |measured − published| ≤ 3·√(sd²/S + sd²/P), P = seeds behind the published number.
inline void require_reproduces(const Measured& m, double published, int published_seeds) {
    const double tol = 3.0 * m.sd * std::sqrt(1.0 / m.seeds + 1.0 / published_seeds);
    INFO("measured " << 100 * m.mean << "% (sd across " << m.seeds << " seeds " << 100 * m.sd << "), published "
                     << 100 * published << "% from " << published_seeds << " seed(s), tolerance ±" << 100 * tol);
    REQUIRE(std::abs(m.mean - published) <= tol);
}

/// An exactly known value (chance, a count): |measured − value| ≤ 3 · sd/√S.
inline void require_matches_exact(const Measured& m, double value) {
    const double tol = 3.0 * m.se();
    INFO("measured " << 100 * m.mean << "% (sd across " << m.seeds << " seeds " << 100 * m.sd << "), expected "
                     << 100 * value << "%, tolerance ±" << 100 * tol);
    REQUIRE(std::abs(m.mean - value) <= tol);
}

}  // namespace memcap::test
