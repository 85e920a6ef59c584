// memcap/memories/cosformer/cosformer.hpp — cosFormer: linear attention with ReLU features and
// a cos-based re-weighting by position, kept as two grids (cos and sin) and their normalisers.
//
// Stores:       S_c, S_s (d_v × d_φ each), z_c, z_s (d_φ each) and the position i (1 float);
//               all 0 after reset.
// Write:        token i (the writes since reset, from 0), θ_i = π i / (2M), φ = relu(P k)
//               (P: feature_map.hpp's proj, d_φ × d_k):
//                 S_c += v (φ cos θ_i)ᵀ,  S_s += v (φ sin θ_i)ᵀ,  z_c += φ cos θ_i,  z_s += φ sin θ_i.
// Read:         at the position of the last write i, ψ = relu(P q):
//                 (S_c ψ cos θ_i + S_s ψ sin θ_i) / (z_cᵀψ cos θ_i + z_sᵀψ sin θ_i)
//               = Σ_j ψ·φ_j cos(π (i − j) / 2M) v_j / Σ_j ψ·φ_j cos(π (i − j) / 2M) — Qin et al.
//               2022, eqs. 9–11, its decomposition by cos(a − b) = cos a cos b + sin a sin b (its
//               K'ᵀV are d_φ × d_v: memcap's orientation is their transpose). 0 where the
//               denominator is not positive. M is the paper's sequence-length horizon: pairs
//               more than M tokens back get negative weight (keep M ≥ the stream's length).
// state_floats: 2 d_v d_φ + 2 d_φ + 1, d_φ = floor((B − 1) / (2 (d_v + 1))) (d_k without a budget).
#pragma once

#include "core/rng.hpp"
#include "memories/grid/feature_map.hpp"
#include "memories/memory.hpp"

namespace memcap {

class CosFormer final : public Memory {
public:
    static std::int64_t feature_budget(const MemoryShape& shape) {
        return shape.budget_floats ? (*shape.budget_floats - 1) / (2 * (shape.d_value + 1)) : shape.d_key;
    }
    CosFormer(const MemoryShape& shape, double horizon, Rng& rng);

    void reset() override { state_.setZero(); }
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return state_.size(); }
    ConstStateView state() const override { return ConstStateView(state_.data(), state_.size()); }
    StateRef mutable_state() override { return StateRef(state_.data(), state_.size()); }
    std::int64_t param_floats() const override { return phi_.param_floats(); }

private:
    RowMat features(ConstVecRef x) const;

    FeatureMap phi_;
    int d_v_;
    double horizon_;
    Vec state_;  // [S_c | S_s | z_c | z_s | i]
};

}  // namespace memcap
