// memcap/memories/performer/performer.cpp — see performer.hpp.
#include "memories/performer/performer.hpp"

#include <cmath>

namespace memcap {

Performer::Performer(const MemoryShape& shape, double beta, Rng& rng)
    : omega_(features_at(shape), shape.d_key), scale_(static_cast<float>(std::sqrt(beta))), d_v_(shape.d_value),
      state_(Vec::Zero(std::int64_t{shape.d_value} * omega_.rows() + omega_.rows())) {
    rng.fill_normal(omega_);
}

RowMat Performer::features(ConstMatRef x) const {
    const float norm = 1.0f / std::sqrt(static_cast<float>(omega_.rows()));
    RowMat f = (scale_ * x) * omega_.transpose();  // n × m: ω_iᵀ x'
    for (Eigen::Index r = 0; r < f.rows(); ++r) {
        const float half_sq = 0.5f * scale_ * scale_ * x.row(r).squaredNorm();
        f.row(r) = ((f.row(r).array() - half_sq).exp() * norm).matrix();
    }
    return f;
}

void Performer::write(ConstVecRef key, ConstVecRef value) {
    const RowMat f = features(key.transpose());
    const Eigen::Index m = omega_.rows();
    Eigen::Map<RowMat> s(state_.data(), d_v_, m);
    s.noalias() += value * f;
    state_.tail(m) += f.row(0).transpose();
}

void Performer::read(ConstVecRef query, VecRef out) const {
    const RowMat f = features(query.transpose());
    const Eigen::Index m = omega_.rows();
    const Eigen::Map<const RowMat> s(state_.data(), d_v_, m);
    const float denom = f.row(0).transpose().dot(state_.tail(m));
    out.noalias() = s * f.transpose();
    if (denom > 0.0f) out /= denom;
    else out.setZero();
}

}  // namespace memcap
