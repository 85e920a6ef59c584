// memcap/memories/mlstm/mlstm.hpp — xLSTM's matrix memory (mLSTM), with its normaliser and
// its stabilised exponential input gate.
//
// Stores:       C, d_v × d_φ; the normaliser n, d_φ; the stabiliser m, 1 float (C = 0, n = 0,
//               m = 0 after reset).
// Write:        per pair (k, v) with φ = φ(k) (feature_map.hpp's proj, not normalised), the
//               forget gate f_t ∈ (0, 1] and the exponential input gate i_t = exp(ĩ_t):
//                 m_t = max(log f_t + m_{t−1}, ĩ_t)
//                 f' = exp(log f_t + m_{t−1} − m_t),  i' = exp(ĩ_t − m_t)
//                 C ← f' C + i' v φᵀ,  n ← f' n + i' φ
//               — Beck et al. 2024, eqs. 19–27 (C_t = f_t C_{t−1} + i_t v_t k_tᵀ, n_t = f_t n_{t−1}
//               + i_t k_t), in the stabilised form of its appendix: C and n are kept scaled by
//               e^{−m_t}, which changes no read. The paper's C is d_v × d_k with reads C q,
//               memcap's orientation as written.
// Read:         C φ(q) / max(|nᵀφ(q)|, e^{−m}) — the paper's h̃ = C q / max(|nᵀq|, 1) of the
//               unscaled C and n.
// state_floats: d_v·d_φ + d_φ + 1, d_φ = floor((B − 1) / (d_v + 1)) (d_k without a budget): the
//               paper counts d_k·d_v + d_k (+1 for the stabiliser).
// Gates:        log_decay = log f_t (one for every channel), beta = i_t > 0 (ĩ_t = log β_t);
//               absent: the memory's `forget` and `input`.
// Special case: f = i = 1 (forget=1, input=0) keeps m = 0, f' = i' = 1: C is the linear grid's
//               M = Σ v φ(k)ᵀ bit for bit (the same products), and reads are the linear grid's
//               divided by max(|nᵀφ(q)|, 1) — equal where |nᵀφ(q)| ≤ 1.
// The paper's 1/√d_k on the keys belongs to its learned projection; memcap's keys are unit.
//
// State layout: [C row-major | n | m]: state()[i·d_φ + j] = C(i, j).
#pragma once

#include "core/rng.hpp"
#include "memories/grid/feature_map.hpp"
#include "memories/memory.hpp"

namespace memcap {

class Mlstm final : public Memory {
public:
    /// d_φ at a shape: floor((B − 1) / (d_v + 1)), d_k without a budget.
    static std::int64_t feature_budget(const MemoryShape& shape) {
        return shape.budget_floats ? (*shape.budget_floats - 1) / (shape.d_value + 1) : shape.d_key;
    }
    /// forget: f ∈ (0, 1]; input: ĩ (i = e^ĩ).
    Mlstm(const MemoryShape& shape, double forget, double input, Rng& rng);

    void reset() override;
    void write(ConstVecRef key, ConstVecRef value) override;
    void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return state_.size(); }
    ConstStateView state() const override { return ConstStateView(state_.data(), state_.size()); }
    StateRef mutable_state() override { return StateRef(state_.data(), state_.size()); }
    std::int64_t param_floats() const override { return phi_.param_floats(); }

    int d_phi() const { return phi_.dim(); }

private:
    void step(ConstVecRef key, ConstVecRef value, float log_f, float log_i);

    FeatureMap phi_;
    int d_v_;
    float log_f_, log_i_;
    Vec state_;  // [C | n | m]
};

}  // namespace memcap
