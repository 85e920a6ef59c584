// memcap/memories/mlstm/mlstm.cpp — see mlstm.hpp.
#include "memories/mlstm/mlstm.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace memcap {

Mlstm::Mlstm(const MemoryShape& shape, double forget, double input, Rng& rng)
    : phi_("proj", shape.d_key, feature_budget(shape), 1, rng), d_v_(shape.d_value),
      log_f_(static_cast<float>(std::log(forget))), log_i_(static_cast<float>(input)),
      state_(Vec::Zero(std::int64_t{shape.d_value} * phi_.dim() + phi_.dim() + 1)) {}

void Mlstm::reset() { state_.setZero(); }

void Mlstm::step(ConstVecRef key, ConstVecRef value, float log_f, float log_i) {
    const Eigen::Index d_phi = phi_.dim();
    RowMat f(1, d_phi);
    phi_.apply(key.transpose(), f);
    Eigen::Map<RowMat> c(state_.data(), d_v_, d_phi);
    auto n = state_.segment(Eigen::Index{d_v_} * d_phi, d_phi);
    float& m = state_(state_.size() - 1);
    const float m_new = std::max(log_f + m, log_i);
    const float fg = std::exp(log_f + m - m_new), ig = std::exp(log_i - m_new);
    m = m_new;
    if (fg != 1.0f) c *= fg, n *= fg;
    if (ig == 1.0f) {
        c.noalias() += value * f;  // the linear grid's product (linear_grid.cpp)
        n += f.row(0).transpose();
    } else {
        c.noalias() += (ig * value) * f;
        n += ig * f.row(0).transpose();
    }
}

void Mlstm::write(ConstVecRef key, ConstVecRef value) { step(key, value, log_f_, log_i_); }

void Mlstm::write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) {
    if (gate.write_gate) throw std::invalid_argument("mlstm takes a per-token decay (log f) and input gate (beta = i), no write gate");
    if (gate.log_decay && gate.decay_channels != 1)
        throw std::invalid_argument("mlstm's forget gate is one scalar a token (a decay of one column)");
    if (gate.beta && !(*gate.beta > 0.0f)) throw std::invalid_argument("mlstm's input gate beta = i must be > 0");
    step(key, value, gate.log_decay ? *gate.log_decay : log_f_, gate.beta ? std::log(*gate.beta) : log_i_);
}

void Mlstm::read(ConstVecRef query, VecRef out) const {
    const Eigen::Index d_phi = phi_.dim();
    RowMat f(1, d_phi);
    phi_.apply(query.transpose(), f);
    const Eigen::Map<const RowMat> c(state_.data(), d_v_, d_phi);
    const auto n = state_.segment(Eigen::Index{d_v_} * d_phi, d_phi);
    const float m = state_(state_.size() - 1);
    const float denom = std::max(std::abs(f.row(0).transpose().dot(n)), std::exp(-m));
    out.noalias() = c * f.transpose();
    out /= denom;
}

}  // namespace memcap
