// memcap/memories/theory/winner_take_all.cpp — see winner_take_all.hpp.
#include "memories/theory/winner_take_all.hpp"

#include "memories/theory/numeric.hpp"

#include <boost/math/quadrature/gauss_kronrod.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace memcap::theory {
namespace {

template <class F>
double integrate(F f, double lo, double hi, double tol = 1e-11) {
    return boost::math::quadrature::gauss_kronrod<double, 31>::integrate(f, lo, hi, 12, tol);
}

}  // namespace

double normal_log_cdf(double x) {
    if (x > 5) return std::log1p(-0.5 * std::erfc(x / M_SQRT2));
    if (x > -30) return std::log(0.5 * std::erfc(-x / M_SQRT2));
    const double x2 = x * x;  // asymptotic series of Mills' ratio
    return -0.5 * x2 - kLogSqrt2Pi - std::log(-x) + std::log1p(-1 / x2 + 3 / (x2 * x2) - 15 / (x2 * x2 * x2));
}

double wta_recall(double gap, double sd_target, double sd_other, double candidates) {
    require(sd_target >= 0 && sd_other > 0 && candidates >= 1, "wta_recall: need sd_target >= 0, sd_other > 0, candidates >= 1");
    if (candidates <= 1) return 1.0;
    auto f = [&](double h) {
        return std::exp(-0.5 * h * h - kLogSqrt2Pi + (candidates - 1) * normal_log_cdf((gap + sd_target * h) / sd_other));
    };
    return std::clamp(integrate(f, -13, 13, 1e-12), 0.0, 1.0);
}

double fks_recall(double s, double candidates) { return wta_recall(s, 1, 1, candidates); }

}  // namespace memcap::theory
