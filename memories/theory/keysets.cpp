// memcap/memories/theory/keysets.cpp — see keysets.hpp.
#include "memories/theory/keysets.hpp"

#include "memories/theory/winner_take_all.hpp"

#include <cmath>

namespace memcap::theory {

double keyset_crosstalk(std::int64_t n, int d, std::int64_t vocab, bool frame) {
    const double others = static_cast<double>(n - 1);
    if (!frame) return others / d;
    if (vocab <= d) return 0.0;
    const double v = static_cast<double>(vocab);
    return others * (v / d - 1.0) / (v - 1.0);
}

double keyset_grid_recall(std::int64_t n, int d, double crosstalk, double noise_sigma) {
    if (n < 2) return 1.0;
    const double rho2 = 1.0 / (1.0 + noise_sigma * noise_sigma * (d - 1.0)), rho = std::sqrt(rho2);
    const double eps = rho2 * crosstalk + (1.0 - rho2) * static_cast<double>(n - 1) / d;
    if (eps == 0.0) return 1.0;  // every read is its value exactly
    const double sd_target = std::sqrt(eps / d);
    const double sd_other = std::sqrt(eps / static_cast<double>(n - 1) + eps / d);
    return wta_recall(rho, sd_target, sd_other, static_cast<double>(n));
}

}  // namespace memcap::theory
