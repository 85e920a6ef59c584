// memcap/memories/theory/information.cpp — see information.hpp.
#include "memories/theory/information.hpp"

#include "memories/theory/numeric.hpp"

#include <algorithm>
#include <cmath>

namespace memcap::theory {

double log2_factorial(std::int64_t n) {
    require(n >= 0, "log2_factorial: n must be >= 0");
    return std::lgamma(static_cast<double>(n) + 1.0) / std::log(2.0);
}

namespace {

/// The largest n ≥ 0 with need(n) ≤ bits, need non-decreasing in n (bracketing, then bisection).
template <class Need>
std::int64_t largest(double bits, Need need) {
    if (!(bits >= 0.0)) return 0;
    std::int64_t lo = 1, hi = 2;  // need(lo) <= bits (need(1) = 0), need(hi) > bits once bracketed
    while (need(hi) <= bits) lo = hi, hi *= 2;
    while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        (need(mid) <= bits ? lo : hi) = mid;
    }
    return lo;
}

}  // namespace

std::int64_t max_pairs_exact(double bits) { return largest(bits, log2_factorial); }

double min_bits_at(std::int64_t n, double accuracy) {
    require(n >= 0, "min_bits_at: n must be >= 0");
    require(accuracy > 0.0 && accuracy <= 1.0, "min_bits_at: accuracy must be in (0, 1]");
    // e = (1 − a) n taken as a real (Γ for its factorials): at least ⌊(1 − a) n⌋, so the bound is
    // at most the counting bound's (still a bound), and smooth in n (bisection finds its largest n).
    const double nn = static_cast<double>(n), e = (1.0 - accuracy) * nn;
    const double ln2 = std::log(2.0);
    const double log2_e_fact = std::lgamma(e + 1.0) / ln2, log2_rest_fact = std::lgamma(nn - e + 1.0) / ln2;
    const double log2n = n > 0 ? std::log2(nn) : 0.0;
    return std::max(0.0, log2_e_fact + log2_rest_fact - e * log2n);
}

std::int64_t max_pairs_at(double bits, double accuracy) {
    return largest(bits, [accuracy](std::int64_t n) { return min_bits_at(n, accuracy); });
}

}  // namespace memcap::theory
