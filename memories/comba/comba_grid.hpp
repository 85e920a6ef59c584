// memcap/memories/comba/comba_grid.hpp — Comba: the delta rule with a separate, shrunk removal
// key (closed-loop control's feedback), after a scalar decay.
//
// Stores:       S, d_v × d_φ (as `delta`).
// Write:        per token (k, v), φ = φ(k) of unit length, p = b φ (b = σ(d) ∈ (0, 1]):
//                 u = β (v − S p),  S ← α S + u φᵀ
//               — Hu et al. 2025 (Comba), S_t = α_t S_{t−1} + β_t k_t (v_t − S_{t−1}ᵀ p_t)ᵀ with
//               S d_k × d_v; flash-linear-attention's fused_recurrent_comba takes the correction
//               v − Sᵀp from the state before the decay, as here. memcap's S is d_v × d_φ, so
//               the paper's Sᵀp is S p and k (v − …)ᵀ is u φᵀ. b = 1 and α = 1 is the delta rule
//               (DeltaNet's arithmetic, bit for bit); b < 1 removes less than it writes.
// Read:         S φ(q), φ(q) normalised. The paper's output correction q ← q − D p subtracts the
//               query token's own removal key; a memcap read takes a query and no key of its
//               own, so it is not built (D = 0).
// state_floats: d_v × d_φ, d_φ = floor(B / d_v).
// Gates:        log_decay (α_t, one for every channel), beta (β_t).
#pragma once

#include "memories/grid/outer_product_grid.hpp"

namespace memcap {

class CombaGrid final : public OuterProductGrid {
public:
    CombaGrid(const MemoryShape& shape, double alpha, double beta, double removal, const std::string& phi, int nu, Rng& rng)
        : OuterProductGrid(shape, phi, nu, /*normalise=*/true, rng), alpha_(static_cast<float>(alpha)),
          beta_(static_cast<float>(beta)), removal_(static_cast<float>(removal)) {}

    void write(ConstVecRef key, ConstVecRef value) override { step(key, value, alpha_, beta_); }
    void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) override;

protected:
    /// No causal backward (the entry does not declare causal_backward): its n_h-step or
    /// corrected write is not one step S diag(a) + u φᵀ.
    WriteStep write_step(ConstVecRef, const TokenGate&) const override {
        throw std::logic_error("comba has no causal backward pass");
    }
    void write_backward(ConstMatRef, ConstMatRef, const RowMat&, MatRef) const override {
        throw std::logic_error("comba has no backward pass");
    }

private:
    void step(ConstVecRef key, ConstVecRef value, float alpha, float beta);

    float alpha_, beta_, removal_;
};

}  // namespace memcap
