// memcap/harness/experiments/published.hpp — every number the essays publish, as data.
//
// One table, used by `memcap reproduce` (its verdict table) and by the tests
// tagged [essay004] and [essay000]. Each entry says what the essay claims and
// how a measurement is judged against it (the rule is results/stats.hpp's):
//
//   value       |mean − value| ≤ 3·sd·√(1/S + 1/P) + unit, P = `seeds` behind the essay's number
//   perfect     the mean is at least 99%
//   about_half  the mean is within 10 points of 50%
//   below       the 95% interval lies below `value`
//   diagnostic  |mean − value| ≤ 3·√2·se + unit (a diagnostic with its own standard error)
//   exact       |measured − value| ≤ unit (a worked example, computed exactly)
//   check       a lab check that passes or fails
//
// `unit` is half of the essay's last printed digit. Keys name the experiment
// and the setting, e.g. "004.p3.grid.n=128".
#pragma once

#include <string>
#include <vector>

namespace memcap {

enum class Claim { value, perfect, about_half, below, diagnostic, exact, check };

struct PublishedNumber {
    std::string key;
    std::string experiment;  // table label, e.g. "assoc. recall (004 Part 3)"
    std::string quantity;    // table label, e.g. "grid d x d, n=128"
    Claim claim = Claim::value;
    double value = 0;  // a fraction where `percent`
    int seeds = 1;     // seeds (memories, rotations) behind the essay's number
    double unit = 0;   // half of the last printed digit
    bool percent = true;
    int digits = 3;    // printed digits when not a percentage
    std::string note;  // shown in REPRODUCTION.md when the number does not agree
};

/// Every published number, in the order of the reproduction table.
const std::vector<PublishedNumber>& published_numbers();
/// The entry with this key; std::out_of_range naming it otherwise.
const PublishedNumber& published(const std::string& key);

}  // namespace memcap
