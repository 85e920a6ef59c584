// memcap/harness/results/stats.cpp — see stats.hpp.
#include "harness/results/stats.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace memcap {

double Summary::se() const { return sd / std::sqrt(static_cast<double>(count)); }

Summary summarise(const std::vector<double>& x, const SummaryOptions& o) {
    Summary s;
    s.count = static_cast<int>(x.size());
    const double n = static_cast<double>(x.size());
    double sum = 0;
    for (double v : x) sum += v;
    s.mean = sum / n;
    double ss = 0;
    for (double v : x) ss += (v - s.mean) * (v - s.mean);
    s.sd = x.size() > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
    if (o.binomial_queries > 0) {
        const double q = o.binomial_queries;
        const double p = std::clamp(s.mean, 1.0 / q, 1.0 - 1.0 / q);
        s.sd = std::max(s.sd, std::sqrt(p * (1 - p) / q));
    }
    const double t = x.size() > 1 ? boost::math::quantile(boost::math::students_t(n - 1), 0.975)
                                   : std::numeric_limits<double>::quiet_NaN();
    s.lo = s.mean - t * s.se();
    s.hi = s.mean + t * s.se();
    if (o.clip_to_unit) s.lo = std::max(0.0, s.lo), s.hi = std::min(1.0, s.hi);
    return s;
}

double reproduction_tolerance(const Summary& m, int published_seeds, double unit) {
    return 3.0 * m.sd * std::sqrt(1.0 / m.count + 1.0 / published_seeds) + unit;
}

bool reproduces(const Summary& m, double published, int published_seeds, double unit) {
    return std::abs(m.mean - published) <= reproduction_tolerance(m, published_seeds, unit);
}

}  // namespace memcap
