// memcap/memories/theory/chains.cpp — see chains.hpp.
#include "memories/theory/chains.hpp"

namespace memcap::theory {

double chain_cleanup_accuracy(double p1, std::int64_t n, int h) {
    const double back = (1.0 - p1) / static_cast<double>(n - 1);  // an error that lands on the right item
    double p = p1;
    for (int k = 2; k <= h; ++k) p = p1 * p + (1.0 - p) * back;
    return p;
}

}  // namespace memcap::theory
