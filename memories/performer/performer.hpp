// memcap/memories/performer/performer.hpp — random-feature attention: Performer's positive
// random features (FAVOR+) with its normaliser.
//
// Stores:       S, d_v × m, and the normaliser z, m (S = 0, z = 0 after reset).
// Write:        S ← S + v φ(k)ᵀ, z ← z + φ(k), with the positive random features
//                 φ(x) = exp(ω_iᵀ x' − ‖x'‖²/2) / √m, i = 1..m,  x' = √β x,
//               ω_i ~ N(0, I_{d_k}) drawn once (iid; the paper's orthogonal variant lowers the
//               variance further and is not built). E[φ(q)·φ(k)] = exp(β q·k): the softmax
//               cache's kernel at sharpness β (Choromanski et al. 2021, Lemma 1; its x/d^{1/4}
//               is β = 1/√d). The paper's K'ᵀ V and K'ᵀ 1 are d_φ × d_v and d_φ: memcap's
//               orientation is their transpose.
// Read:         S φ(q) / (zᵀ φ(q)) — the normalised attention D⁻¹(Q'(K'ᵀ V)); 0 where zᵀφ(q)
//               underflows to 0. No max-subtraction: at β ≤ 64 and unit keys ω·x' stays far
//               below float's exp range.
// state_floats: d_v·m + m, m = floor(B / (d_v + 1)) (d_k without a budget).
// Theory:       the estimate K̂ = φ(x)·φ(y) of exp(x'·y') is unbiased with
//                 Var K̂ = (1/m) exp(2 x'·y') (exp(‖x' + y'‖²) − 1)        (the paper's Lemma 2),
//               so its relative error is √((e^{‖x'+y'‖²} − 1)/m): at unit keys and β, the asked
//               key (y = x) costs √((e^{4β} − 1)/m) — the sharp kernels a cache reads best
//               with are the ones random features estimate worst.
#pragma once

#include "core/rng.hpp"
#include "memories/memory.hpp"

namespace memcap {

class Performer final : public Memory {
public:
    /// m at a shape: floor(B / (d_v + 1)), d_k without a budget.
    static std::int64_t features_at(const MemoryShape& shape) {
        return shape.budget_floats ? *shape.budget_floats / (shape.d_value + 1) : shape.d_key;
    }
    Performer(const MemoryShape& shape, double beta, Rng& rng);

    void reset() override { state_.setZero(); }
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return state_.size(); }
    ConstStateView state() const override { return ConstStateView(state_.data(), state_.size()); }
    StateRef mutable_state() override { return StateRef(state_.data(), state_.size()); }
    std::int64_t param_floats() const override { return omega_.size(); }

    /// φ(x) of every row of x (n × d_k → n × m).
    RowMat features(ConstMatRef x) const;
    int feature_count() const { return static_cast<int>(omega_.rows()); }

private:
    RowMat omega_;  // m × d_k
    float scale_;   // √β
    int d_v_;
    Vec state_;  // [S row-major | z]
};

}  // namespace memcap
