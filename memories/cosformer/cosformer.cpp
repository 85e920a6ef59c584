// memcap/memories/cosformer/cosformer.cpp — see cosformer.hpp.
#include "memories/cosformer/cosformer.hpp"

#include <cmath>

namespace memcap {

namespace {
constexpr double kPi = 3.14159265358979323846;
}

CosFormer::CosFormer(const MemoryShape& shape, double horizon, Rng& rng)
    : phi_("proj", shape.d_key, std::max<std::int64_t>(1, feature_budget(shape)), 1, rng), d_v_(shape.d_value),
      horizon_(horizon), state_(Vec::Zero(2 * (std::int64_t{shape.d_value} + 1) * phi_.dim() + 1)) {}

RowMat CosFormer::features(ConstVecRef x) const {
    RowMat f(1, phi_.dim());
    phi_.apply(x.transpose(), f);
    return f.cwiseMax(0.0f);
}

void CosFormer::write(ConstVecRef key, ConstVecRef value) {
    const Eigen::Index d = phi_.dim(), grid = Eigen::Index{d_v_} * d;
    float& position = state_(state_.size() - 1);
    const double theta = kPi * position / (2.0 * horizon_);
    const float c = static_cast<float>(std::cos(theta)), s = static_cast<float>(std::sin(theta));
    const RowMat f = features(key);
    Eigen::Map<RowMat> sc(state_.data(), d_v_, d), ss(state_.data() + grid, d_v_, d);
    sc.noalias() += value * (c * f);
    ss.noalias() += value * (s * f);
    state_.segment(2 * grid, d) += c * f.row(0).transpose();
    state_.segment(2 * grid + d, d) += s * f.row(0).transpose();
    position += 1.0f;
}

void CosFormer::read(ConstVecRef query, VecRef out) const {
    const Eigen::Index d = phi_.dim(), grid = Eigen::Index{d_v_} * d;
    const float writes = state_(state_.size() - 1);
    out.setZero();
    if (writes == 0.0f) return;
    const double theta = kPi * (writes - 1.0f) / (2.0 * horizon_);  // the last write's position
    const float c = static_cast<float>(std::cos(theta)), s = static_cast<float>(std::sin(theta));
    const RowMat f = features(query);
    const Eigen::Map<const RowMat> sc(state_.data(), d_v_, d), ss(state_.data() + grid, d_v_, d);
    const float denom = c * f.row(0).dot(state_.segment(2 * grid, d).transpose()) +
                        s * f.row(0).dot(state_.segment(2 * grid + d, d).transpose());
    if (!(denom > 0.0f)) return;
    out.noalias() = c * (sc * f.transpose()) + s * (ss * f.transpose());
    out /= denom;
}

}  // namespace memcap
