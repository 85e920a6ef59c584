// memcap/memories/theory/crosstalk.cpp — see crosstalk.hpp (derivation: docs/theory.md, sections 2 and 3).
#include "memories/theory/crosstalk.hpp"

#include "memories/theory/numeric.hpp"

#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/gamma.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace memcap::theory {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------
// Quadrature rules.

struct Rule {
    std::vector<double> x, w;
};

// m-point Gauss–Legendre on [−1, 1] (Newton on P_m from Chebyshev guesses).
Rule gauss_legendre(int m) {
    Rule r;
    r.x.resize(static_cast<std::size_t>(m));
    r.w.resize(static_cast<std::size_t>(m));
    for (int i = 0; i < m; ++i) {
        double x = std::cos(M_PI * (i + 0.75) / (m + 0.5)), dp = 0;
        for (int it = 0; it < 100; ++it) {
            double p0 = 1, p1 = x;
            for (int k = 2; k <= m; ++k) {
                const double p2 = ((2.0 * k - 1) * x * p1 - (k - 1.0) * p0) / k;
                p0 = p1, p1 = p2;
            }
            dp = m * (x * p1 - p0) / (x * x - 1);
            const double dx = p1 / dp;
            x -= dx;
            if (std::abs(dx) < 1e-15) break;
        }
        r.x[static_cast<std::size_t>(i)] = x;
        r.w[static_cast<std::size_t>(i)] = 2 / ((1 - x * x) * dp * dp);
    }
    return r;
}

const Rule& legendre8() {
    static const Rule r = gauss_legendre(8);
    return r;
}

// Composite 8-point Gauss–Legendre on [lo, hi] with `panels` panels.
Rule composite(double lo, double hi, int panels) {
    const Rule& b = legendre8();
    Rule r;
    const double h = (hi - lo) / panels;
    for (int p = 0; p < panels; ++p)
        for (std::size_t k = 0; k < b.x.size(); ++k) {
            r.x.push_back(lo + h * (p + 0.5 * (b.x[k] + 1)));
            r.w.push_back(0.5 * h * b.w[k]);
        }
    return r;
}

// m-point Gauss–Legendre on (0, 1): nodes in probability, for integrals over a
// distribution through its quantile function.
Rule probability_rule(int m) {
    Rule r = gauss_legendre(m);
    for (std::size_t k = 0; k < r.x.size(); ++k) r.x[k] = 0.5 * (r.x[k] + 1), r.w[k] *= 0.5;
    return r;
}

// ---------------------------------------------------------------------------
// One coordinate t of a uniform unit vector in R^d (equivalently, the cosine of
// two independent random directions): density ∝ (1 − t²)^((d−3)/2) on [−1, 1],
// mean 0, variance 1/d. Its tail P(t > x) is tabulated in log on a grid of
// z = x√d (step 0.005) and interpolated linearly: relative error < 1e-5.


/// The table of type T for width d, built once per process and shared by every
/// thread. Tables of different widths build at the same time; a thread that needs
/// one another thread is building waits for it.
template <class T>
std::shared_ptr<const T> built_once(int d) {
    static std::mutex m;
    static std::map<int, std::shared_future<std::shared_ptr<const T>>> cache;
    std::promise<std::shared_ptr<const T>> promise;
    std::shared_future<std::shared_ptr<const T>> table;
    bool build = false;
    {
        std::lock_guard<std::mutex> lock(m);
        const auto it = cache.find(d);
        if (it == cache.end()) {
            table = promise.get_future().share();
            cache.emplace(d, table);
            build = true;
        } else {
            table = it->second;
        }
    }
    if (build) {
        try {
            promise.set_value(std::make_shared<const T>(d));
        } catch (...) {
            promise.set_exception(std::current_exception());
        }
    }
    return table.get();
}

class Sphere {
public:
    explicit Sphere(int d) : d_(d), sqrt_d_(std::sqrt(static_cast<double>(d))) {
        const double a = 0.5, b = 0.5 * (d - 1);
        log_norm_ = -(std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b));
        zmax_ = std::min(sqrt_d_, 45.0);
        const int cells = static_cast<int>(std::ceil(2 * zmax_ / kStep));
        step_ = 2 * zmax_ / cells;
        log_tail_.resize(static_cast<std::size_t>(cells) + 1);
        for (int i = 0; i <= cells; ++i) log_tail_[static_cast<std::size_t>(i)] = exact_log_tail((-zmax_ + i * step_) / sqrt_d_);
    }

    int d() const { return d_; }
    double log_density(double t) const {
        if (std::abs(t) >= 1) return kNegInf;
        return log_norm_ + 0.5 * (d_ - 3) * std::log1p(-t * t);
    }
    double sd() const { return 1 / sqrt_d_; }

    // P(t > x).
    double tail(double x) const {
        const double z = x * sqrt_d_;
        if (z <= -zmax_) return x <= -1 ? 1.0 : std::exp(exact_log_tail(x));
        if (z >= zmax_) return x >= 1 ? 0.0 : std::exp(exact_log_tail(x));
        const double u = (z + zmax_) / step_;
        const std::size_t i = std::min(static_cast<std::size_t>(u), log_tail_.size() - 2);
        const double f = u - static_cast<double>(i);
        return std::exp((1 - f) * log_tail_[i] + f * log_tail_[i + 1]);
    }

    static std::shared_ptr<const Sphere> get(int d) { return built_once<Sphere>(d); }

private:
    static constexpr double kStep = 0.005;
    double exact_log_tail(double x) const {
        if (x <= -1) return 0;
        if (x >= 1) return -745;
        const double a = 0.5, b = 0.5 * (d_ - 1);
        // P(|t| > |x|) = I_{1−x²}(b, a): the regularised incomplete beta of t².
        const double both = boost::math::ibeta(b, a, 1 - x * x);
        const double v = x >= 0 ? 0.5 * both : 1 - 0.5 * both;
        return v > 0 ? std::max(std::log(v), -745.0) : -745.0;
    }
    int d_;
    double sqrt_d_, log_norm_ = 0, zmax_ = 0, step_ = 0;
    std::vector<double> log_tail_;
};

// ---------------------------------------------------------------------------
// H_d(z) = P(τ > κ(b) z), κ(b) = √((1 − b)/(1 + b)), b ~ Sphere(d), τ ~ Sphere(d − 1)
// independent: the probability that one competitor beats the target when its
// margin, in units of the crosstalk orthogonal to the target value, is z (see
// docs/theory.md). H(−z) = 1 − H(z). log H is tabulated on z ∈ [0, 64] (step 0.004)
// and on asinh(z) up to 10⁶ (step 0.004), beyond that a power law, from a
// Gauss–Legendre rule over the angle θ = acos b, graded towards θ = 0 where large
// z puts all of the mass.

class MarginTable {
public:
    explicit MarginTable(int d) {
        const auto tau = Sphere::get(d - 1);
        const auto bsph = Sphere::get(d);
        // θ nodes: b ∈ [−lb, lb] carries all but e^{-72} of the mass.
        const double lb = std::min(1.0, 12 * bsph->sd());
        const double th_lo = std::acos(lb), th_hi = std::acos(-lb);
        std::vector<double> cuts;
        if (th_lo < 1e-3) {  // graded mesh near θ = 0
            cuts.push_back(0);
            for (double t = 1e-6; t < 0.25; t *= 1.5) cuts.push_back(t);
            for (int k = 0; k <= 48; ++k) cuts.push_back(0.25 + (th_hi - 0.25) * k / 48);
        } else {
            for (int k = 0; k <= 64; ++k) cuts.push_back(th_lo + (th_hi - th_lo) * k / 64);
        }
        std::vector<double> kappa, weight;
        const Rule& g = legendre8();
        double total = 0;
        for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
            const double h = cuts[c + 1] - cuts[c];
            for (std::size_t k = 0; k < g.x.size(); ++k) {
                const double th = cuts[c] + 0.5 * h * (g.x[k] + 1);
                const double b = std::cos(th);
                // density of θ: f_b(cos θ) sin θ
                const double w = 0.5 * h * g.w[k] * std::exp(bsph->log_density(b)) * std::sin(th);
                kappa.push_back(std::tan(0.5 * th));
                weight.push_back(w);
                total += w;
            }
        }
        for (double& w : weight) w /= total;
        auto h_at = [&](double z) {
            double h = 0;
            for (std::size_t k = 0; k < kappa.size(); ++k) h += weight[k] * tau->tail(kappa[k] * z);
            return h > 0 ? std::max(std::log(h), -745.0) : -745.0;
        };
        near_.resize(static_cast<std::size_t>(kNear / kStep) + 1);
        for (std::size_t i = 0; i < near_.size(); ++i) near_[i] = h_at(static_cast<double>(i) * kStep);
        const double u0 = std::asinh(kNear), u1 = std::asinh(kZmax);
        const int cells = static_cast<int>(std::ceil((u1 - u0) / kStep));
        ustep_ = (u1 - u0) / cells;
        far_.resize(static_cast<std::size_t>(cells) + 1);
        for (int i = 0; i <= cells; ++i) far_[static_cast<std::size_t>(i)] = h_at(std::sinh(u0 + i * ustep_));
        const std::size_t last = far_.size() - 1;
        tail_slope_ = (far_[last] - far_[last - 1]) / (std::log(kZmax) - std::log(std::sinh(u1 - ustep_)));
    }

    // H(z) = P(this competitor beats the target).
    double operator()(double z) const {
        if (std::isnan(z)) return 0.5;
        if (z < 0) return 1 - (*this)(-z);
        return exp_nonpositive(log_h(z));
    }

    // log H(z) for z ≥ 0 (−∞ at z = ∞): the table's interpolation, before the exponential.
    double log_h(double z) const {
        if (z < kNear) return lerp(near_, z / kStep);
        if (z >= kZmax) return std::isinf(z) ? kNegInf : far_.back() + tail_slope_ * (std::log(z) - std::log(kZmax));
        return lerp(far_, (std::asinh(z) - std::asinh(kNear)) / ustep_);
    }

    // log H(|z[k]|) into out[k] for every k with ok[k] != 0 (others: unspecified), the same
    // values as log_h: the near table's lanes in one vectorised pass (the interpolation is
    // the same arithmetic), the far lanes after it one by one.
    void log_h_abs(const double* z, const double* ok, double* out, std::size_t count) const {
        const double* table = near_.data();
        const int last = static_cast<int>(near_.size()) - 2;
        double far = 0;  // lanes past the near table: a count, exact in any order
#pragma omp simd reduction(+ : far)
        for (std::size_t k = 0; k < count; ++k) {
            const double az = std::abs(z[k]);
            const bool near = (ok[k] != 0) & (az < kNear);
            far += select_bits((ok[k] != 0) & !near, 1.0, 0.0);  // select_bits: vectorised without AVX-512 too
            out[k] = lerp(table, last, select_bits(near, az, 0.0) / kStep);
        }
        if (far == 0) return;
        for (std::size_t k = 0; k < count; ++k)
            if (ok[k] != 0 && !(std::abs(z[k]) < kNear)) out[k] = log_h(std::abs(z[k]));
    }

    static std::shared_ptr<const MarginTable> get(int d) { return built_once<MarginTable>(d); }

private:
    // The table's value at position u ≥ 0 (linear between entries; the last cell extended):
    // an int index (tables of a few thousand entries), no branch, so a loop of these vectorises.
    static double lerp(const double* table, int last, double u) {
        const int i0 = static_cast<int>(u), i = i0 < last ? i0 : last;
        const double f = u - static_cast<double>(i);
        return (1 - f) * table[i] + f * table[i + 1];
    }
    static double lerp(const std::vector<double>& table, double u) {
        return lerp(table.data(), static_cast<int>(table.size()) - 2, u);
    }
    // log H on z = 0, 0.004, ..., 64, then on asinh(z) up to 10⁶ (step 0.004).
    static constexpr double kNear = 64, kZmax = 1e6, kStep = 0.004;
    double ustep_ = 0, tail_slope_ = 0;
    std::vector<double> near_, far_;
};

// ---------------------------------------------------------------------------
// The crosstalk model shared by the grid and the cache (derivation in docs/theory.md).
// The read is r = w_t v_i + Σ_{j≠i} g(a_j) v_j; competitor c beats the target when
//   τ_c > κ(b_c) (w_t − g_c − δ_c ζ + X) / √(U − X² − δ_c²),   g_c = g(a_c), δ_c = g_c − ḡ,
// U = ‖u_c‖², u_c = Σ_{j≠i,c} g(a_j) v_j, X = u_c·v_i = √U t (t ~ Sphere(d)),
// ζ ~ N(0, 1/d) the common factor of the competitors' mutual crosstalk; U, t, ζ
// are shared by all competitors, a_c, b_c, τ_c drawn per competitor. So
//   p = E_{U, t, ζ}[ (1 − G)^(M−1) ],   G = E_a[ H_d((w_t − g(a) − δ(a) ζ + X) / √(U − X² − δ(a)²)) ].

struct WeightModel {
    double target;                          // w_t
    double mean;                            // E g(a)
    std::function<double(double)> weight;   // g(a)
};

// Quantile of Gamma(shape, scale); for shape > 10⁵ the Wilson–Hilferty cube-root normal
// approximation (relative error < 10⁻⁶ there), where Boost's series becomes slow.
double gamma_quantile(double shape, double scale, double p) {
    if (shape <= 1e5) return boost::math::quantile(boost::math::gamma_distribution<double>(shape, scale), p);
    const double z = boost::math::quantile(boost::math::normal_distribution<double>(), p), c = 1 / (9 * shape);
    const double r = 1 - c + z * std::sqrt(c);
    return shape * scale * r * r * r;
}

// Nodes (value, weight) for U = ‖Σ_{k=1..m} g(a_k) v_k‖²: U = A·Y with A = Σ g² ~ Gamma
// (mean m·μ2, variance m·(μ4 − μ2²), shape at least 0.05) and Y ~ χ²_ν/ν, ν = d/(1 − φ),
// φ = E Σg⁴ / E A² (Y carries the cross terms Σ_{j≠k} g_j g_k v_j·v_k, whose variance
// given the weights is 2(A² − Σg⁴)/d). Quantiles of the product by bisection on its CDF.
std::vector<std::pair<double, double>> rest_nodes(double m, double mu2, double mu4, int d, int count) {
    std::vector<std::pair<double, double>> out;
    const double mean_a = m * mu2;
    if (m <= 0 || !(mean_a > 1e-300)) {
        out.emplace_back(0.0, 1.0);
        return out;
    }
    const double var_a = std::min(m * std::max(mu4 - mu2 * mu2, 0.0), mean_a * mean_a / 0.05);
    const double phi = mu4 / (mu4 + (m - 1) * mu2 * mu2);
    const double nu = phi < 1 - 1e-12 ? d / (1 - phi) : std::numeric_limits<double>::infinity();
    const Rule rp = probability_rule(count);
    const bool a_fixed = var_a <= 1e-8 * mean_a * mean_a, y_fixed = !std::isfinite(nu) || nu > 1e8;
    if (a_fixed && y_fixed) {
        out.emplace_back(mean_a, 1.0);
        return out;
    }
    if (a_fixed || y_fixed) {
        for (std::size_t k = 0; k < rp.x.size(); ++k)
            out.emplace_back(a_fixed ? gamma_quantile(nu / 2, 2 * mean_a / nu, rp.x[k])
                                     : gamma_quantile(mean_a * mean_a / var_a, var_a / mean_a, rp.x[k]),
                             rp.w[k]);
        return out;
    }
    const Rule ry = probability_rule(16);
    std::vector<double> ys;
    for (double x : ry.x) ys.push_back(gamma_quantile(nu / 2, 2 / nu, x));
    const boost::math::gamma_distribution<double> ga(mean_a * mean_a / var_a, var_a / mean_a);
    auto cdf = [&](double u) {
        double c = 0;
        for (std::size_t j = 0; j < ys.size(); ++j) c += ry.w[j] * boost::math::cdf(ga, u / ys[j]);
        return c;
    };
    auto pdf = [&](double u) {
        double f = 0;
        for (std::size_t j = 0; j < ys.size(); ++j) f += ry.w[j] * boost::math::pdf(ga, u / ys[j]) / ys[j];
        return f;
    };
    // Start from the moment-matched Gamma; Newton steps kept inside a bracket, bisection as fallback.
    const double var_u = (mean_a * mean_a + var_a) * (1 + 2 / nu) - mean_a * mean_a;
    for (std::size_t k = 0; k < rp.x.size(); ++k) {
        const double target = rp.x[k];
        double u = gamma_quantile(mean_a * mean_a / var_u, var_u / mean_a, target), lo = 0, hi = std::numeric_limits<double>::infinity();
        for (int it = 0; it < 100; ++it) {
            const double c = cdf(u) - target;
            if (c < 0) lo = u; else hi = u;
            if (std::abs(c) < 1e-10 || (std::isfinite(hi) && hi - lo < 1e-9 * hi)) break;
            const double f = pdf(u);
            double next = f > 0 ? u - c / f : std::numeric_limits<double>::quiet_NaN();
            if (!(next > lo && next < hi)) next = std::isfinite(hi) ? 0.5 * (lo + hi) : 2 * u + mean_a;
            u = next;
        }
        out.emplace_back(u, rp.w[k]);
    }
    return out;
}

// Moments of a rest pair's weight g(a), a ~ Sphere(d), conditioned on g(a) ≤ w_t (a pair
// that outweighs the target makes the read wrong through its own competitor term; given
// that the read is right, the rest holds none): E g, E g², E g⁴ over the truncated law.
struct RestMoments {
    double mean, mu2, mu4;
};

RestMoments rest_moments(const Sphere& sph, const std::function<double(double)>& g, double target) {
    const int panels = std::max(512, static_cast<int>(16 * std::sqrt(static_cast<double>(sph.d()))));
    const Rule r = composite(-1, 1, panels);
    double m0 = 0, m1 = 0, m2 = 0, m4 = 0;
    for (std::size_t k = 0; k < r.x.size(); ++k) {
        const double w = r.w[k] * std::exp(sph.log_density(r.x[k]));
        if (w == 0) continue;
        const double v = g(r.x[k]);
        if (v > target) continue;
        m0 += w, m1 += w * v, m2 += w * v * v, m4 += w * v * v * v * v;
    }
    return {m1 / m0, m2 / m0, m4 / m0};
}

// Node counts: a and t 8-point Gauss–Legendre panels over ±12 and ±10 sd; U and ζ in probability.
constexpr int kPanelsA = 16, kPanelsT = 12, kNodesU = 12, kNodesZeta = 8;

// Node by node in vectorised loops (raw pointers, no branch), for crosstalk_recall's inner
// sum. The crosstalk orthogonal to the target and the competitor, v = perp² − dev², and √v
// (1 where v ≤ 0: not read there); then the margin z = (base + x) / √v and whether H's
// table is read (ok: a finite weight, v > 0, z not NaN).
void orthogonal(const double* dev2, double perp2, double* v, double* root_v, std::size_t na) {
#pragma omp simd
    for (std::size_t k = 0; k < na; ++k) {
        const double vk = perp2 - dev2[k];
        v[k] = vk, root_v[k] = std::sqrt(vk > 0 ? vk : 1.0);
    }
}

void margins(const double* base, const double* finite, double x, const double* v, const double* root_v, double* z,
             double* ok, std::size_t na) {
#pragma omp simd
    for (std::size_t k = 0; k < na; ++k) {
        const double zk = (base[k] + x) / root_v[k];
        z[k] = zk;
        ok[k] = (finite[k] != 0) & (v[k] > 0) & (zk == zk) ? 1.0 : 0.0;
    }
}

// The probability that the competitor at each node beats the target: H(z) read from
// log H(|z|), 1 − H(|z|) for z < 0; given outright where the table is not read — a weight
// beyond double range outweighs the target (1), no crosstalk orthogonal to the target lets
// the margin's sign decide (0, 1; a NaN margin 0.5), a NaN z is a coin (0.5).
void competitor_wins(const double* base, const double* finite, const double* v, const double* z, const double* ok,
                     const double* log_h, double x, double* value, std::size_t na) {
#pragma omp simd
    for (std::size_t k = 0; k < na; ++k) {  // every choice a select_bits (numeric.hpp), so it vectorises without AVX-512
        const bool read = ok[k] != 0;
        const double h = exp_nonpositive(select_bits(read, log_h[k], kNegInf));
        const double margin = base[k] + x;
        const double sign = select_bits(margin > 0, 0.0, select_bits(margin < 0, 1.0, 0.5));
        const double given = select_bits(finite[k] == 0, 1.0, select_bits(v[k] > 0, 0.5, sign));
        value[k] = select_bits(read, select_bits(z[k] < 0, 1 - h, h), given);
    }
}

// rest: nodes of U at the scale of this call (see rest_nodes).
double crosstalk_recall(int d, double candidates, const WeightModel& m, const std::vector<std::pair<double, double>>& rest) {
    if (candidates <= 1) return 1.0;
    const auto sph = Sphere::get(d);
    const auto H = MarginTable::get(d);
    const double la = std::min(1.0, 12 * sph->sd());
    const Rule ra = composite(-la, la, kPanelsA);
    std::vector<double> wa(ra.x.size()), ga(ra.x.size());
    double total = 0;
    for (std::size_t k = 0; k < ra.x.size(); ++k) {
        wa[k] = ra.w[k] * std::exp(sph->log_density(ra.x[k]));
        ga[k] = m.weight(ra.x[k]);
        total += wa[k];
    }
    for (double& w : wa) w /= total;
    {  // nodes whose weight is below 1e-12 of the target's all give the same margin: merge them
        std::vector<double> w2, g2;
        double w0 = 0, g0 = 0;
        for (std::size_t k = 0; k < wa.size(); ++k) {
            if (std::abs(ga[k]) < 1e-12 * std::abs(m.target)) w0 += wa[k], g0 += wa[k] * ga[k];
            else w2.push_back(wa[k]), g2.push_back(ga[k]);
        }
        if (w0 > 0) w2.push_back(w0), g2.push_back(g0 / w0);
        wa.swap(w2), ga.swap(g2);
    }

    const double lt = std::min(1.0, 10 * sph->sd());
    const Rule rt = composite(-lt, lt, kPanelsT);
    std::vector<double> wt(rt.x.size());
    total = 0;
    for (std::size_t k = 0; k < rt.x.size(); ++k) total += (wt[k] = rt.w[k] * std::exp(sph->log_density(rt.x[k])));
    for (double& w : wt) w /= total;

    const Rule rz = probability_rule(kNodesZeta);  // kNodesZeta nodes: the sums over a keep one each
    const boost::math::normal_distribution<double> zeta_law(0, sph->sd());

    // Per node a, fixed through the loops: its weight's deviation from the mean, that squared,
    // and the target's lead over it; per ζ, base = lead − dev·ζ, so the margin is base + x, the
    // same operations in the same order as written out. Per (U, t), v = perp² − dev² and its
    // root serve every ζ; the sums over t run per ζ in t's order and are added to p in (U, ζ)
    // order, as a loop over U, ζ, t would add them. Each node's value (H, 1 − H, or given
    // outright) is computed in vectorised passes and the sum over a runs in node order, so
    // the result's bits do not depend on the vector width.
    const std::size_t na = wa.size(), nz = rz.x.size();
    std::vector<double> dev(na), dev2(na), lead(na), finite(na), v(na), root_v(na), z(na), ok(na), log_h(na), value(nz * na);
    for (std::size_t k = 0; k < na; ++k) {
        finite[k] = std::isfinite(ga[k]) ? 1.0 : 0.0;
        dev[k] = ga[k] - m.mean, dev2[k] = dev[k] * dev[k], lead[k] = m.target - ga[k];
    }
    std::vector<double> base(nz * na), pz(nz);
    for (std::size_t zi = 0; zi < nz; ++zi) {
        const double zeta = boost::math::quantile(zeta_law, rz.x[zi]);
        for (std::size_t k = 0; k < na; ++k) base[zi * na + k] = lead[k] - dev[k] * zeta;
    }
    double p = 0;
    for (const auto& [u, uw] : rest) {
        const double root_u = std::sqrt(u);
        std::fill(pz.begin(), pz.end(), 0.0);
        for (std::size_t j = 0; j < rt.x.size(); ++j) {
            const double t = rt.x[j], x = root_u * t, perp2 = u * std::max(1 - t * t, 0.0);
            orthogonal(dev2.data(), perp2, v.data(), root_v.data(), na);
            for (std::size_t zi = 0; zi < nz; ++zi) {
                const double* bz = base.data() + zi * na;
                margins(bz, finite.data(), x, v.data(), root_v.data(), z.data(), ok.data(), na);
                H->log_h_abs(z.data(), ok.data(), log_h.data(), na);
                competitor_wins(bz, finite.data(), v.data(), z.data(), ok.data(), log_h.data(), x, value.data() + zi * na, na);
            }
            // G per ζ: each sum over a in node order, the eight sums side by side (independent
            // chains of additions, so the core overlaps them; each one's bits as if alone).
            std::array<double, kNodesZeta> g{};
            for (std::size_t k = 0; k < na; ++k)
                for (std::size_t zi = 0; zi < kNodesZeta; ++zi) g[zi] += wa[k] * value[zi * na + k];
            for (std::size_t zi = 0; zi < kNodesZeta; ++zi)
                pz[zi] += wt[j] * std::exp((candidates - 1) * std::log1p(-std::min(g[zi], 1.0)));
        }
        for (std::size_t zi = 0; zi < nz; ++zi) p += uw * rz.w[zi] * pz[zi];
    }
    return std::clamp(p, 0.0, 1.0);
}

// Quantiles of the query–key cosine ρ = k·unit(k + σz) for unit k in R^d,
// z ~ N(0, I): with w = 1 + σ z₁ and X ~ χ²_{d−1}, ρ = w / √(w² + σ² X).
// Returned at the nodes of rho_rule(); memoised per (d, σ).

// Nodes in probability u ∈ (0, 1) graded towards both ends, where the accuracy
// changes fastest with ρ: u = ½e^{−y} (and 1 − ½e^{−y}), y ∈ [0, 18] in three
// 4-point Gauss–Legendre panels, [0, 2], [2, 6], [6, 18]: 24 nodes.
const Rule& rho_rule() {
    static const Rule r = [] {
        const Rule g = gauss_legendre(4);
        Rule out;
        const double cuts[] = {0, 2, 6, 18};
        for (int side = 0; side < 2; ++side)
            for (int c = 0; c < 3; ++c) {
                const double h = cuts[c + 1] - cuts[c];
                // each panel's weights rescaled to its exact mass ½(e^{−y₀} − e^{−y₁})
                const double mass = 0.5 * (std::exp(-cuts[c]) - std::exp(-cuts[c + 1]));
                double sum = 0;
                const std::size_t first = out.x.size();
                for (std::size_t k = 0; k < g.x.size(); ++k) {
                    const double y = cuts[c] + 0.5 * h * (g.x[k] + 1), u = 0.5 * std::exp(-y);
                    out.x.push_back(side ? 1 - u : u);
                    out.w.push_back(0.5 * h * g.w[k] * u);  // du = ½e^{−y} dy
                    sum += out.w.back();
                }
                for (std::size_t k = first; k < out.x.size(); ++k) out.w[k] *= mass / sum;
            }
        return out;
    }();
    return r;
}

double rho_cdf(int d, double sigma, double r, const Rule& rz) {
    const double k = 0.5 * (d - 1);
    double c = 0;
    for (std::size_t j = 0; j < rz.x.size(); ++j) {
        const double z = rz.x[j], wz = rz.w[j] * std::exp(-0.5 * z * z - kLogSqrt2Pi);
        const double w = 1 + sigma * z;
        double prob;
        if (r >= 1) prob = 1;
        else if (r <= -1) prob = 0;
        else if (r == 0) prob = w > 0 ? 0 : 1;
        else {
            const double thr = 0.5 * w * w * (1 / (r * r) - 1) / (sigma * sigma);  // X/2 threshold
            if (w > 0) prob = r < 0 ? 0 : boost::math::gamma_q(k, thr);
            else prob = r > 0 ? 1 : boost::math::gamma_p(k, thr);
        }
        c += wz * prob;
    }
    return c;
}

std::vector<double> rho_quantiles(int d, double sigma) {
    static std::mutex m;
    static std::map<std::pair<int, double>, std::vector<double>> cache;
    {
        std::lock_guard<std::mutex> lock(m);
        auto it = cache.find({d, sigma});
        if (it != cache.end()) return it->second;
    }
    const Rule rz = composite(-9, 9, 24);
    const Rule& rp = rho_rule();
    std::vector<double> q(rp.x.size());
    for (std::size_t i = 0; i < rp.x.size(); ++i) {
        double lo = -1, hi = 1;
        for (int it = 0; it < 48; ++it) {
            const double mid = 0.5 * (lo + hi);
            (rho_cdf(d, sigma, mid, rz) < rp.x[i] ? lo : hi) = mid;
        }
        q[i] = 0.5 * (lo + hi);
    }
    std::lock_guard<std::mutex> lock(m);
    cache[{d, sigma}] = q;
    return q;
}

// E over ρ of f(ρ): ρ = 1 without noise.
template <class F>
double over_rho(int d, double sigma, F f) {
    if (sigma <= 0) return f(1.0);
    const std::vector<double> q = rho_quantiles(d, sigma);
    const Rule& rp = rho_rule();
    double s = 0;
    for (std::size_t i = 0; i < q.size(); ++i) s += rp.w[i] * f(q[i]);
    return s;
}

}  // namespace

// ---------------------------------------------------------------------------

namespace {

// The grid and the cache: the target's weight w_t(ρ) and a rest pair's g(a; ρ).
template <class Target, class Weight>
double crosstalk_over_rho(double n, int d, double noise_sigma, Target target, Weight weight) {
    if (n == 1) return 1.0;
    const auto sph = Sphere::get(d);
    return over_rho(d, noise_sigma, [&](double rho) {
        const double wt = target(rho);
        const std::function<double(double)> g = [&](double a) { return weight(a, rho); };
        const RestMoments rm = rest_moments(*sph, g, wt);
        const auto rest = rest_nodes(n - 2, rm.mu2, rm.mu4, d, kNodesU);
        return crosstalk_recall(d, n, WeightModel{wt, rm.mean, g}, rest);
    });
}

}  // namespace

double grid_recall_real(double n, int d, double noise_sigma) {
    require(n >= 1 && d >= 4 && noise_sigma >= 0, "grid_recall: need n >= 1, d >= 4, noise_sigma >= 0");
    return crosstalk_over_rho(n, d, noise_sigma, [](double rho) { return rho; }, [](double a, double) { return a; });
}

double grid_recall(std::int64_t n, int d, double noise_sigma) { return grid_recall_real(static_cast<double>(n), d, noise_sigma); }

double cache_recall(std::int64_t n, int d, double beta, double noise_sigma) {
    return cache_recall_real(static_cast<double>(n), d, beta, noise_sigma);
}

double cache_recall_real(double n, int d, double beta, double noise_sigma) {
    require(n >= 1 && d >= 4 && beta >= 0 && noise_sigma >= 0, "cache_recall: need n >= 1, d >= 4, beta >= 0, noise_sigma >= 0");
    // Weights relative to the target's, ω_j = e^{β(a_j − ρ)}: the softmax normaliser cancels.
    return crosstalk_over_rho(n, d, noise_sigma, [](double) { return 1.0; },
                              [beta](double a, double rho) { return std::exp(beta * (a - rho)); });
}

double sphere_tail(int d, double x) { return Sphere::get(d)->tail(x); }

}  // namespace memcap::theory
