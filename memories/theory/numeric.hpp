// memcap/memories/theory/numeric.hpp — small helpers the theory models share.
#pragma once

#include <stdexcept>

namespace memcap::theory {

/// log √(2π), for normal densities in log space.
inline constexpr double kLogSqrt2Pi = 0.91893853320467274178;

/// Throws std::invalid_argument(what) unless ok: the models' argument checks.
inline void require(bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
}

}  // namespace memcap::theory
