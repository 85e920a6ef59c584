// memcap/harness/results/stats.cpp — see stats.hpp.
#include "harness/results/stats.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace memcap {

double Summary::se() const { return sd / std::sqrt(static_cast<double>(count)); }

double binomial_sd(double mean, double queries) {
    const double edge = std::min(1.0 / queries, 0.5);  // q < 2 would give an empty range
    const double p = std::clamp(mean, edge, 1.0 - edge);
    return std::sqrt(p * (1 - p) / queries);
}

double accuracy_standard_error(double mean, double sd, double seeds, double queries_per_seed) {
    return std::max(sd, binomial_sd(mean, queries_per_seed)) / std::sqrt(seeds);
}

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
    if (o.binomial_queries > 0) s.sd = std::max(s.sd, binomial_sd(s.mean, o.binomial_queries));
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
