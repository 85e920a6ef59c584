// memcap/memories/theory/chains.hpp — chained lookups with cleanup.
#pragma once

#include <cstdint>

namespace memcap::theory {

/// Chained lookups with cleanup (chain_recall:cleanup=nearest): accuracy at hop h from the
/// one-hop accuracy p1 among n items. Each hop reads a clean stored item, so hops fail
/// independently; the items form one cycle, so a wrong item never leads back by itself —
/// only a second error that lands on exactly the right item does, about (1 − p1)/(n − 1)
/// per hop (errors spread evenly over the n − 1 wrong items):
///   p_h = p1 · p_{h−1} + (1 − p_{h−1}) (1 − p1)/(n − 1),   p_1 = p1,
/// i.e. p_h − 1/n = (p1 − 1/n) (p1 − (1 − p1)/(n − 1))^(h−1): p1^h plus at most about
/// h (1 − p1)/(n − 1), decaying to chance 1/n, its fixed point. n ≥ 2, h ≥ 1.
double chain_cleanup_accuracy(double p1, std::int64_t n, int h);

}  // namespace memcap::theory
