// memcap/memories/feature_map.cpp — see feature_map.hpp.
#include "memories/feature_map.hpp"

#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <limits>

namespace memcap {

FeatureMap::FeatureMap(const std::string& kind, int d_in, std::int64_t max_dim, int nu, Rng& rng)
    : dpfp_(kind == "dpfp"), nu_(nu), d_in_(d_in) {
    const std::int64_t m = dpfp_ ? max_dim / (2 * nu) : max_dim;
    m_ = static_cast<int>(std::min<std::int64_t>(m, std::numeric_limits<int>::max() / (2 * nu)));
    dim_ = dpfp_ ? 2 * nu * m_ : m_;
    identity_ = (m_ == d_in_);
    if (!identity_) {
        // A random semi-orthogonal map: orthonormal columns when m ≥ d_in (inner
        // products kept exactly), orthonormal rows scaled by √(d_in/m) when m < d_in
        // (kept on average, with less spread than a Gaussian map).
        const int tall = std::max(m_, d_in_), wide = std::min(m_, d_in_);
        Eigen::MatrixXd g(tall, wide);
        for (int j = 0; j < wide; ++j)
            for (int i = 0; i < tall; ++i) g(i, j) = rng.normal();
        Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
        Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(tall, wide);
        for (int j = 0; j < wide; ++j)
            if (qr.matrixQR()(j, j) < 0) q.col(j) = -q.col(j);
        if (m_ >= d_in_) proj_ = q.cast<float>();
        else proj_ = (q.transpose() * std::sqrt(static_cast<double>(d_in_) / m_)).cast<float>();
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

}  // namespace memcap
