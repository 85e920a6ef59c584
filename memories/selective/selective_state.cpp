// memcap/memories/selective/selective_state.cpp — see selective_state.hpp.
#include "memories/selective/selective_state.hpp"

#include "memories/grid/salience.hpp"

#include <cmath>

namespace memcap {

float SelectiveState::step(const float* value, int d_value) const {
    if (!gated_) return 1.0f;
    return salience_step(value, d_value, feature_);  // 1 without a declared salience feature
}

void SelectiveState::write(ConstVecRef key, ConstVecRef value) { write_batch(key.transpose(), value.transpose()); }

void SelectiveState::write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& g) {
    if (g.beta) throw std::invalid_argument("the selective state takes no per-token write strength beta");
    if (g.log_decay && g.decay_channels != 1)
        throw std::invalid_argument("the selective state's decay is one scalar: a per-channel decay is refused");
    const float delta = g.write_gate ? *g.write_gate : step(value.data(), static_cast<int>(value.size()));
    if (delta == 0.0f) return;  // a skipped token: the state exactly as it was
    const double a = g.log_decay ? std::exp(double(g.log_decay[0])) : std::pow(rho_, double(delta));
    thread_local RowMat f;  // (a write per token: no allocation each time)
    features_into(key.transpose(), f);
    if (a != 1.0) grid_ *= static_cast<float>(a);
    grid_.noalias() += (delta * value) * f;
}

OuterProductGrid::WriteStep SelectiveState::write_step(ConstVecRef value, const TokenGate& g) const {
    // as write_gated: the same Δ, a and b
    WriteStep s;
    const float delta = g.write_gate ? *g.write_gate : step(value.data(), static_cast<int>(value.size()));
    if (delta == 0.0f && g.log_decay) {
        s.frozen = true;
        return s;
    }
    const Eigen::Index d = grid_.cols();
    const double a = g.log_decay ? std::exp(double(g.log_decay[0])) : std::pow(rho_, double(delta));
    if (g.log_decay || rho_ != 1.0) s.a = RowVec::Constant(d, static_cast<float>(a));
    if (!g.log_decay && rho_ != 1.0) s.dlog_a_dgate = RowVec::Constant(d, static_cast<float>(std::log(rho_)));
    s.b = delta;
    s.db_dgate = 1.0f;
    return s;
}

void SelectiveState::write_batch(ConstMatRef keys, ConstMatRef values) {
    // Unrolled: S_n = (Π_i a_i) S_0 + Σ_i w_i v_i φ(k_i)ᵀ with w_i = b_i Π_{j>i} a_j,
    // so n writes are one GEMM.
    const RowMat f = features(keys);
    double suffix = 1.0;
    const Vec w = unrolled_weights(values, rho_, gated_, feature_, suffix);
    if (suffix != 1.0) grid_ *= static_cast<float>(suffix);
    grid_.noalias() += values.transpose() * (w.asDiagonal() * f);
}

void SelectiveState::write_backward(ConstMatRef keys, ConstMatRef values, const RowMat& d_grid, MatRef d_keys) const {
    double decay = 1.0;
    const Vec w = unrolled_weights(values, rho_, gated_, feature_, decay);
    const RowMat d_f = w.asDiagonal() * (values * d_grid);  // n × d_φ
    features_backward(keys, d_f, d_keys);
}

}  // namespace memcap
