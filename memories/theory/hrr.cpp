// memcap/memories/theory/hrr.cpp — see hrr.hpp.
#include "memories/theory/hrr.hpp"

#include "memories/theory/numeric.hpp"

#include "memories/theory/winner_take_all.hpp"

#include <cmath>
#include <stdexcept>

namespace memcap::theory {

namespace {

HrrMoments moments(double nn, std::int64_t D) {
    require(nn >= 1 && D >= 2, "hrr_moments: need n >= 1, D >= 2");
    const double d = static_cast<double>(D);
    HrrMoments m;
    m.signal_mean = 1;
    m.signal_var = 2 * d / ((d + 2) * (d + 2));
    m.target_var = m.signal_var + (nn - 1) / d;
    const double own = (2 * d + 2) / (d * (d + 2));  // ‖s‖²/D and the competitor's own pair, each
    m.other_var = (nn >= 2 ? (nn - 2) / d : 0.0) + 2 * own;
    return m;
}

}  // namespace

HrrMoments hrr_moments(std::int64_t n, std::int64_t D) { return moments(static_cast<double>(n), D); }

double hrr_recall_real(double n, std::int64_t D, double candidates) {
    require(n >= 1 && D >= 2 && candidates >= 1, "hrr_recall: need n >= 1, D >= 2, candidates >= 1");
    if (candidates == 1) return 1.0;
    const HrrMoments m = moments(n, D);
    return wta_recall(m.signal_mean, std::sqrt(m.target_var), std::sqrt(m.other_var), candidates);
}

double hrr_recall(std::int64_t n, std::int64_t D, std::int64_t candidates) {
    return hrr_recall_real(static_cast<double>(n), D, static_cast<double>(candidates));
}

double hrr_noisy_recall_real(double n, std::int64_t D, double sigma) {
    if (sigma <= 0) return hrr_recall_real(n, D, n);
    require(n >= 1 && D >= 2, "hrr_moments: need n >= 1, D >= 2");
    const double rho = 1 / std::sqrt(1 + sigma * sigma * static_cast<double>(D));
    const auto m = moments(n, D);
    const double extra = (1 - rho * rho) * (n + 1) / static_cast<double>(D);
    return wta_recall(rho * m.signal_mean, std::sqrt(rho * rho * m.target_var + extra),
                      std::sqrt(rho * rho * m.other_var + extra), n);
}

double hrr_noisy_recall(std::int64_t n, std::int64_t D, double sigma) {
    return hrr_noisy_recall_real(static_cast<double>(n), D, sigma);
}

}  // namespace memcap::theory
