// memcap/harness/experiments/diagnostics.cpp — see diagnostics.hpp.
#include "harness/experiments/diagnostics.hpp"

#include "core/rng.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace memcap {
namespace {

Eigen::VectorXd softmax(const Eigen::VectorXd& logits) {
    Eigen::VectorXd p = (logits.array() - logits.maxCoeff()).exp();
    return p / p.sum();
}

Eigen::VectorXd ranks(const Eigen::VectorXd& x) {
    std::vector<Eigen::Index> order(static_cast<std::size_t>(x.size()));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) { return x(a) < x(b); });
    Eigen::VectorXd r(x.size());
    for (std::size_t i = 0; i < order.size(); ++i) r(order[i]) = static_cast<double>(i);
    return r;
}

double spearman(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    const Eigen::VectorXd ra = ranks(a), rb = ranks(b);
    const Eigen::VectorXd ca = ra.array() - ra.mean(), cb = rb.array() - rb.mean();
    return ca.dot(cb) / std::sqrt(ca.squaredNorm() * cb.squaredNorm());
}

}  // namespace

std::vector<SqrtDStats> sqrt_d_statistics(const std::vector<int>& dims, int keys, int trials, std::uint64_t seed) {
    std::vector<SqrtDStats> out;
    for (int d : dims) {
        Rng rng = Rng::stream("diagnostics/sqrt_d", d, keys, seed);
        SqrtDStats raw, scaled;
        raw.d = scaled.d = d;
        scaled.scaled = true;
        raw.trials = scaled.trials = trials;
        Eigen::VectorXd z(keys);
        for (int t = 0; t < trials; ++t) {
            // Given q, the logits k_i·q of keys k_i ~ N(0, I_d) are independent N(0, ‖q‖²):
            // draw ‖q‖² ~ χ²_d and the keys' standardised logits z ~ N(0, I), the same
            // distribution as forming K q, with 1 + keys draws instead of d·(keys + 1).
            const double norm_q = std::sqrt(rng.chi_squared(d));
            rng.fill_normal(z);
            const Eigen::VectorXd logits = norm_q * z;
            for (SqrtDStats* s : {&raw, &scaled}) {
                const Eigen::VectorXd p = softmax(s->scaled ? Eigen::VectorXd(logits / std::sqrt(double(d))) : logits);
                double h = 0;
                for (Eigen::Index i = 0; i < p.size(); ++i)
                    if (p(i) > 0) h -= p(i) * std::log(p(i));
                const double m = p.maxCoeff(), g = (p.array() * (1.0 - p.array())).sum();
                s->max_weight += m, s->max_weight_se += m * m;  // second moments, turned into SEs below
                s->entropy_nats += h, s->entropy_se += h * h;
                s->grad_proxy += g, s->grad_proxy_se += g * g;
            }
        }
        const auto finish = [trials](double& mean, double& second) {
            mean /= trials;
            second = std::sqrt(std::max(0.0, second / trials - mean * mean) / trials);
        };
        for (SqrtDStats* s : {&raw, &scaled}) {
            finish(s->max_weight, s->max_weight_se);
            finish(s->entropy_nats, s->entropy_se);
            finish(s->grad_proxy, s->grad_proxy_se);
            out.push_back(*s);
        }
    }
    return out;
}

InfluenceStats weight_vs_influence(double sigma, int records, int d, double beta, int layers, std::uint64_t seed) {
    Rng rng = Rng::stream("diagnostics/influence", records, d, layers, seed);  // σ is not in the name: paired draws
    InfluenceStats out;
    out.sigma = sigma;
    out.layers = layers;
    int mismatches = 0;
    for (int layer = 0; layer < layers; ++layer) {
        const Eigen::MatrixXd k = rng.unit_rows<Eigen::MatrixXd>(records, d);
        const Eigen::VectorXd q = rng.unit_rows<Eigen::MatrixXd>(1, d).row(0).transpose();
        Eigen::MatrixXd v = rng.unit_rows<Eigen::MatrixXd>(records, d);
        for (int i = 0; i < records; ++i) v.row(i) *= std::exp(sigma * rng.normal());
        const Eigen::VectorXd p = softmax(beta * (k * q));
        const Eigen::VectorXd o = v.transpose() * p;
        Eigen::VectorXd influence(records);
        for (int i = 0; i < records; ++i) {
            const Eigen::VectorXd without = (o - p(i) * v.row(i).transpose()) / (1.0 - p(i));
            influence(i) = (o - without).norm();
        }
        Eigen::Index top_w, top_i;
        p.maxCoeff(&top_w);
        influence.maxCoeff(&top_i);
        mismatches += (top_w != top_i);
        const double rho = spearman(p, influence);
        out.spearman_mean += rho;
        out.spearman_se += rho * rho;
    }
    out.spearman_mean /= layers;
    out.spearman_se = std::sqrt(std::max(0.0, out.spearman_se / layers - out.spearman_mean * out.spearman_mean) / layers);
    out.mismatch_frac = static_cast<double>(mismatches) / layers;
    return out;
}

}  // namespace memcap
