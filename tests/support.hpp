// Shared helpers for tests that compare measured accuracies with published ones.
//
// Tolerances come from sampling error, through the one statistics module
// (harness/results/stats.hpp): the spread of per-seed accuracies across seeds
// with the binomial floor of one seed's queries, and the verdict rule
//
//     |measured − published| ≤ 3 · √(sd²/S + sd²/P)        (≈ 99.7%, two-sided)
//
// with P the seeds behind the published number (essay 004 Part 3: 20 memories;
// Part 1: one rotation and one set of codes, so P = 1). Published numbers come
// from the table in harness/experiments/published.hpp.
#pragma once

#include "harness/eval/cell.hpp"
#include "harness/eval/readout.hpp"
#include "harness/experiments/published.hpp"
#include "harness/results/stats.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

namespace memcap::test {

using Measured = Summary;  // mean, sd (with the binomial floor), count = seeds, se()

inline Measured summarise(const std::vector<double>& acc, double queries_per_seed) {
    return memcap::summarise(acc, SummaryOptions{queries_per_seed, true});
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
        const CellSpec cell = make_cell(parse_memory_spec(r.memory), parse_task_spec(r.task), parse_readout_spec(r.readout),
                                        r.budget, r.d, r.n, static_cast<std::uint64_t>(seed));
        const CellResult o = run_cell(cell);
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
inline void require_reproduces(const Measured& m, double published_value, int published_seeds) {
    const double tol = reproduction_tolerance(m, published_seeds);
    INFO("measured " << 100 * m.mean << "% (sd across " << m.count << " seeds " << 100 * m.sd << "), published "
                     << 100 * published_value << "% from " << published_seeds << " seed(s), tolerance ±" << 100 * tol);
    REQUIRE(reproduces(m, published_value, published_seeds));
}

/// The same, against an entry of the published table (its value and its seeds).
inline void require_reproduces(const Measured& m, const std::string& published_key) {
    const PublishedNumber& p = published(published_key);
    INFO(p.experiment << ": " << p.quantity);
    require_reproduces(m, p.value, p.seeds);
}

/// An exactly known value (chance, a count): |measured − value| ≤ 3 · sd/√S.
inline void require_matches_exact(const Measured& m, double value) {
    const double tol = 3.0 * m.se();
    INFO("measured " << 100 * m.mean << "% (sd across " << m.count << " seeds " << 100 * m.sd << "), expected "
                     << 100 * value << "%, tolerance ±" << 100 * tol);
    REQUIRE(std::abs(m.mean - value) <= tol);
}

}  // namespace memcap::test
