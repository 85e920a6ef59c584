// memcap/memories/grid/feature_map.cpp — see feature_map.hpp.
#include "memories/grid/feature_map.hpp"

#include "core/error.hpp"

#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <limits>

namespace memcap {

FeatureMap::Dims FeatureMap::size(const std::string& kind, int d_in, std::int64_t max_dim, int nu) {
    const bool dpfp = kind == "dpfp";
    const std::int64_t m = dpfp ? max_dim / (2 * nu) : max_dim;
    if (m > std::numeric_limits<int>::max() / (2 * nu))
        throw UsageError("feature map '" + kind + "': " + std::to_string(m) + " features exceed the largest supported (" +
                         std::to_string(std::numeric_limits<int>::max() / (2 * nu)) + "); lower the budget");
    Dims d;
    d.m = static_cast<int>(m);
    d.dim = dpfp ? 2 * nu * d.m : d.m;
    d.identity = d.m == d_in;
    if (!d.identity) {
        d.param_floats = std::int64_t{d.m} * d_in;
        // g, the QR's factors and Q: tall × wide doubles each (see the constructor)
        d.build_scratch_bytes = 3 * 8 * d.param_floats;
    }
    return d;
}

FeatureMap::FeatureMap(const std::string& kind, int d_in, std::int64_t max_dim, int nu, Rng& rng)
    : dpfp_(kind == "dpfp"), nu_(nu) {
    const Dims dims = size(kind, d_in, max_dim, nu);
    m_ = dims.m;
    dim_ = dims.dim;
    identity_ = dims.identity;
    if (!identity_) {
        // A random semi-orthogonal map: orthonormal columns when m ≥ d_in (inner
        // products kept exactly), orthonormal rows scaled by √(d_in/m) when m < d_in
        // (kept on average, with less spread than a Gaussian map).
        const int tall = std::max(m_, d_in), wide = std::min(m_, d_in);
        Eigen::MatrixXd g(tall, wide);
        for (int j = 0; j < wide; ++j)
            for (int i = 0; i < tall; ++i) g(i, j) = rng.normal();
        Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
        Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(tall, wide);
        for (int j = 0; j < wide; ++j)
            if (qr.matrixQR()(j, j) < 0) q.col(j) = -q.col(j);
        if (m_ >= d_in) proj_ = q.cast<float>();
        else proj_ = (q.transpose() * std::sqrt(static_cast<double>(d_in) / m_)).cast<float>();
    }
}

void FeatureMap::apply(ConstMatRef x, MatRef phi) const {
    if (!dpfp_) {
        if (identity_) phi = x;
        else phi.noalias() = x * proj_.transpose();
        return;
    }
    RowMat y = identity_ ? RowMat(x) : RowMat(x * proj_.transpose());
    const int two_m = 2 * m_;
    RowMat r(y.rows(), two_m);
    r.leftCols(m_) = y.cwiseMax(0.0f);
    r.rightCols(m_) = (-y).cwiseMax(0.0f);
    for (int j = 1; j <= nu_; ++j)
        for (int i = 0; i < two_m; ++i)
            phi.col(i + two_m * (j - 1)) = r.col(i).cwiseProduct(r.col((i + j) % two_m));
}

void FeatureMap::backward(ConstMatRef x, ConstMatRef d_phi, MatRef d_x) const {
    if (!dpfp_) {
        if (identity_) d_x = d_phi;
        else d_x.noalias() = d_phi * proj_;
        return;
    }
    const RowMat y = identity_ ? RowMat(x) : RowMat(x * proj_.transpose());
    const int two_m = 2 * m_;
    RowMat r(y.rows(), two_m);
    r.leftCols(m_) = y.cwiseMax(0.0f);
    r.rightCols(m_) = (-y).cwiseMax(0.0f);
    RowMat d_r = RowMat::Zero(y.rows(), two_m);
    for (int j = 1; j <= nu_; ++j)
        for (int i = 0; i < two_m; ++i) {  // φ_{i+2m(j−1)} = r_i r_{(i+j) mod 2m}
            const auto g = d_phi.col(i + two_m * (j - 1));
            d_r.col(i) += g.cwiseProduct(r.col((i + j) % two_m));
            d_r.col((i + j) % two_m) += g.cwiseProduct(r.col(i));
        }
    const RowMat d_y = (y.array() > 0.0f).select(d_r.leftCols(m_), 0.0f) - (y.array() < 0.0f).select(d_r.rightCols(m_), 0.0f);
    if (identity_) d_x = d_y;
    else d_x.noalias() = d_y * proj_;
}

}  // namespace memcap
