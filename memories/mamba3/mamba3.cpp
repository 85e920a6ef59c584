// memcap/memories/mamba3/mamba3.cpp — see mamba3.hpp.
#include "memories/mamba3/mamba3.hpp"

#include "memories/grid/salience.hpp"

#include <cmath>
#include <stdexcept>

namespace memcap {

double Mamba3::pair_rate(double theta, std::int64_t j, std::int64_t pairs) {
    return theta * std::pow(10000.0, -double(j) / double(pairs));
}

Mamba3::Mamba3(const MemoryShape& shape, double rho, double lambda, double theta, bool gated, Rng& rng)
    : phi_("proj", shape.d_key, feature_budget(shape), 1, rng), d_v_(shape.d_value), rho_(rho), lambda_(lambda),
      gated_(gated), feature_(shape.salience_feature),
      state_(Vec::Zero(std::int64_t{shape.d_value} * phi_.dim() + shape.d_value + phi_.dim())) {
    const std::int64_t pairs = phi_.dim() / 2;
    if (theta != 0.0)
        for (std::int64_t j = 0; j < pairs; ++j) rates_.push_back(pair_rate(theta, j, pairs));
}

void Mamba3::reset() { state_.setZero(); }

void Mamba3::step(ConstVecRef key, ConstVecRef value, float delta, std::optional<double> log_a) {
    if (delta == 0.0f) return;  // a skipped token: everything exactly as it was
    const Eigen::Index d_phi = phi_.dim();
    RowMat f(1, d_phi);
    phi_.apply(key.transpose(), f);
    Eigen::Map<RowMat> s(state_.data(), d_v_, d_phi);
    auto v_prev = state_.segment(Eigen::Index{d_v_} * d_phi, d_v_);
    auto f_prev = state_.segment(Eigen::Index{d_v_} * d_phi + d_v_, d_phi);
    const double a = log_a ? std::exp(*log_a) : std::pow(rho_, double(delta));
    if (a != 1.0) s *= static_cast<float>(a);  // as the selective state's write (selective_state.cpp)
    const float b = static_cast<float>((1.0 - lambda_) * double(delta) * a);
    if (b != 0.0f) s.noalias() += (b * v_prev) * f_prev.transpose();
    for (std::size_t j = 0; j < rates_.size(); ++j) {  // S ← S Rᵀ: turn each pair of columns
        const double angle = double(delta) * rates_[j];
        const float c = static_cast<float>(std::cos(angle)), sn = static_cast<float>(std::sin(angle));
        auto x0 = s.col(2 * Eigen::Index(j));
        auto x1 = s.col(2 * Eigen::Index(j) + 1);
        const Vec old0 = x0;
        x0 = c * old0 - sn * x1;
        x1 = sn * old0 + c * x1;
    }
    const float g = static_cast<float>(lambda_) * delta;
    if (g != 0.0f) s.noalias() += (g * value) * f;
    v_prev = value;
    f_prev = f.row(0).transpose();
}

void Mamba3::write(ConstVecRef key, ConstVecRef value) {
    const float delta = gated_ ? salience_step(value.data(), static_cast<int>(value.size()), feature_) : 1.0f;
    step(key, value, delta, std::nullopt);
}

void Mamba3::write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& g) {
    if (g.beta) throw std::invalid_argument("mamba3 takes no per-token write strength beta");
    if (g.log_decay && g.decay_channels != 1)
        throw std::invalid_argument("mamba3's decay is one scalar: a per-channel decay is refused");
    const float delta = g.write_gate ? *g.write_gate
                        : gated_     ? salience_step(value.data(), static_cast<int>(value.size()), feature_)
                                     : 1.0f;
    step(key, value, delta, g.log_decay ? std::optional<double>(double(g.log_decay[0])) : std::nullopt);
}

void Mamba3::read(ConstVecRef query, VecRef out) const {
    const Eigen::Index d_phi = phi_.dim();
    RowMat f(1, d_phi);
    phi_.apply(query.transpose(), f);
    const Eigen::Map<const RowMat> s(state_.data(), d_v_, d_phi);
    out.noalias() = s * f.transpose();
}

}  // namespace memcap
