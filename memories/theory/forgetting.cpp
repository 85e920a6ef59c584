// memcap/memories/theory/forgetting.cpp — see forgetting.hpp.
#include "memories/theory/forgetting.hpp"

#include "memories/theory/numeric.hpp"

#include "memories/theory/winner_take_all.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace memcap::theory {

std::int64_t window_horizon(std::int64_t budget, int d_key, int d_value) {
    require(budget >= 0 && d_key >= 1 && d_value >= 1, "window_horizon: need budget >= 0, d_key, d_value >= 1");
    return budget / (d_key + d_value);
}

double decayed_grid_recall(std::int64_t lag, std::int64_t writes, double gamma, std::int64_t d_phi, int d_value,
                           double cosine) {
    require(writes >= 1 && lag >= 1 && lag <= writes, "decayed_grid_recall: need 1 <= lag <= writes");
    require(gamma > 0 && gamma <= 1 && d_phi >= 1 && d_value >= 1 && cosine > 0 && cosine <= 1,
            "decayed_grid_recall: need gamma in (0, 1], d_phi, d_value >= 1, cosine in (0, 1]");
    if (writes == 1) return 1.0;
    const double dp = static_cast<double>(d_phi), dv = d_value;
    // w_j² = γ^(2(j−1)); their sum S2 in closed form
    const double g2 = gamma * gamma;
    const double s2 = gamma == 1.0 ? static_cast<double>(writes) : (1.0 - std::pow(g2, static_cast<double>(writes))) / (1.0 - g2);
    const double wl = std::pow(gamma, static_cast<double>(lag - 1)), mu = wl * cosine;
    const double sd_t = std::sqrt(std::max(0.0, s2 - wl * wl) / (dp * dv));
    // Competitors grouped by their sd, in bins 1% apart (their count in each): the product
    // of Φ over thousands of competitors costs one term per bin.
    std::map<long, std::pair<double, double>> bins;  // bin → (Σ sd, count)
    double w2 = 1.0;  // w_i² for i = 1, 2, …
    for (std::int64_t i = 1; i <= writes; ++i, w2 *= g2) {
        if (i == lag) continue;
        const double var = w2 / dp + mu * mu / dv + std::max(0.0, s2 - w2 - wl * wl) / (dp * dv);
        const double sd = std::sqrt(var);
        auto& b = bins[std::lround(std::log(sd) / 0.01)];
        b.first += sd, b.second += 1.0;
    }
    // ∫ φ(h) Π Φ(...) dh on h ∈ [−10, 10], composite Simpson on 400 panels (smooth integrand)
    const int panels = 400;
    const double lo = -10, hi = 10, step = (hi - lo) / panels;
    double sum = 0;
    for (int k = 0; k <= panels; ++k) {
        const double h = lo + k * step;
        double log_prod = -0.5 * h * h - kLogSqrt2Pi;
        for (const auto& [key, b] : bins) log_prod += b.second * normal_log_cdf((mu + sd_t * h) / (b.first / b.second));
        const double wgt = (k == 0 || k == panels) ? 1.0 : (k % 2 ? 4.0 : 2.0);
        sum += wgt * std::exp(log_prod);
    }
    return std::clamp(sum * step / 3.0, 0.0, 1.0);
}

double decayed_grid_bucket(std::int64_t lo, std::int64_t hi, std::int64_t writes, double gamma, std::int64_t d_phi,
                           int d_value, double cosine, int points) {
    require(lo >= 0 && hi > lo && hi <= writes && points >= 1, "decayed_grid_bucket: need 0 <= lo < hi <= writes, points >= 1");
    const std::int64_t span = hi - lo, k = std::min<std::int64_t>(points, span);
    double sum = 0;
    for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t lag = lo + 1 + (k == 1 ? span / 2 : j * (span - 1) / (k - 1));
        sum += decayed_grid_recall(lag, writes, gamma, d_phi, d_value, cosine);
    }
    return sum / static_cast<double>(k);
}

std::int64_t decayed_grid_horizon(std::int64_t writes, double gamma, std::int64_t d_phi, int d_value, double threshold,
                                  double cosine) {
    // recall falls with the lag (the signal γ^(ℓ−1) falls; the crosstalk does not grow): the
    // first miss by bisection
    if (decayed_grid_recall(1, writes, gamma, d_phi, d_value, cosine) < threshold) return 0;
    std::int64_t good = 1, bad = writes + 1;
    while (bad - good > 1) {
        const std::int64_t mid = good + (bad - good) / 2;
        (decayed_grid_recall(mid, writes, gamma, d_phi, d_value, cosine) >= threshold ? good : bad) = mid;
    }
    return good;
}

RecallModel window_model(std::int64_t rows, const LagBucket& b) {
    RecallModel m;
    m.model = "window_horizon", m.applies = "approx";
    m.note = "the last " + std::to_string(rows) + " pairs held: lags <= " + std::to_string(rows) +
             " read as a sharp softmax without noise does (1), older ones are gone (0)";
    m.sizes = {{"pairs", rows}};
    const double inside = static_cast<double>(std::clamp<std::int64_t>(rows - b.lo, 0, b.hi - b.lo)) / static_cast<double>(b.hi - b.lo);
    m.call = ModelCall{"window_horizon", {static_cast<double>(rows), static_cast<double>(b.lo), static_cast<double>(b.hi)},
                       [inside] { return inside; }};
    return m;
}

RecallModel decayed_grid_model(double gamma, std::int64_t d_phi, const LagBucket& b) {
    const std::int64_t width = std::min<std::int64_t>(d_phi, b.d);
    RecallModel m;
    m.model = "decayed_grid_bucket", m.applies = "approx";
    char g[32];
    std::snprintf(g, sizeof g, "%.6g", gamma);
    m.note = "Gaussian scores, gamma=" + std::string(g) + ", effective d_phi=min(d_phi, d)=" + std::to_string(width) +
             (b.cosine < 1 ? "; query noise as a cosine on the signal only" : "");
    m.sizes = {{"d_phi", d_phi}};
    const LagBucket k = b;
    m.call = ModelCall{"decayed_grid_bucket",
                       {static_cast<double>(k.lo), static_cast<double>(k.hi), static_cast<double>(k.writes), gamma,
                        static_cast<double>(width), static_cast<double>(k.d), k.cosine},
                       [k, gamma, width] { return decayed_grid_bucket(k.lo, k.hi, k.writes, gamma, width, k.d, k.cosine); }};
    return m;
}

}  // namespace memcap::theory
