// memcap/memories/theory/hrr.cpp — see hrr.hpp.
#include "memories/theory/hrr.hpp"

#include "memories/theory/numeric.hpp"

#include "memories/theory/winner_take_all.hpp"

#include <cmath>
#include <stdexcept>

namespace memcap::theory {

HrrMoments hrr_moments(std::int64_t n, std::int64_t D) {
    require(n >= 1 && D >= 2, "hrr_moments: need n >= 1, D >= 2");
    const double d = static_cast<double>(D), nn = static_cast<double>(n);
    HrrMoments m;
    m.signal_mean = 1;
    m.signal_var = 2 * d / ((d + 2) * (d + 2));
    m.target_var = m.signal_var + (nn - 1) / d;
    const double own = (2 * d + 2) / (d * (d + 2));  // ‖s‖²/D and the competitor's own pair, each
    m.other_var = (nn >= 2 ? (nn - 2) / d : 0.0) + 2 * own;
    return m;
}

double hrr_recall(std::int64_t n, std::int64_t D, std::int64_t candidates) {
    require(n >= 1 && D >= 2 && candidates >= 1, "hrr_recall: need n >= 1, D >= 2, candidates >= 1");
    if (candidates == 1) return 1.0;
    const HrrMoments m = hrr_moments(n, D);
    return wta_recall(m.signal_mean, std::sqrt(m.target_var), std::sqrt(m.other_var), static_cast<double>(candidates));
}

double hrr_noisy_recall(std::int64_t n, std::int64_t D, double sigma) {
    if (sigma <= 0) return hrr_recall(n, D, n);
    const double rho = 1 / std::sqrt(1 + sigma * sigma * static_cast<double>(D));
    const auto m = hrr_moments(n, D);
    const double extra = (1 - rho * rho) * static_cast<double>(n + 1) / static_cast<double>(D);
    return wta_recall(rho * m.signal_mean, std::sqrt(rho * rho * m.target_var + extra),
                      std::sqrt(rho * rho * m.other_var + extra), static_cast<double>(n));
}

}  // namespace memcap::theory
