// memcap/memories/deltaproduct/deltaproduct_grid.hpp — Gated DeltaProduct: n_h delta-rule
// (generalised Householder) steps per token after a scalar decay.
//
// Stores:       S, d_v × d_φ (as `delta`).
// Write:        per token (k, v): S ← α_t S, then for j = 1..n_h
//                 S ← S (I − β κ_j κ_jᵀ) + β v_j κ_jᵀ  (= S + β (v_j − S κ_j) κ_jᵀ)
//               — Siems et al. 2025, eq. 4 (H_{t,j} = I − β_{t,j} k_{t,j} k_{t,j}ᵀ, the state
//               multiplied by the product of the n_h Householder factors), and its gated form
//               (the decay α_t of Gated DeltaNet once per token), in memcap's d_v × d_φ
//               orientation (the paper's right multiplications act on the key side).
//               The paper forms the n_h keys k_{t,j} = W_j x_t by n_h learned projections. A
//               memcap token gives one key and one value, and an untrained layer has no second
//               projection that a read would also use: a fixed random one would write the value
//               where no query ever looks, a loss of capacity by construction, not a finding.
//               So κ_j = φ(k) for every j, v_j = v: n_h steps on one key, which contract the
//               error along it by (1 − β)^{n_h} — DeltaNet with the step 1 − (1 − β)^{n_h} (a
//               test), and n_h = 1 is DeltaNet exactly (its arithmetic, bit for bit). What n_h
//               buys a trained model (state tracking through several reflections a token) is
//               outside what an untrained memory can show.
// Read:         S φ(q), φ normalised (as `delta`).
// state_floats: d_v × d_φ, d_φ = floor(B / d_v) (as `linear`).
// Gates:        log_decay (α_t, one for every channel) and beta (β_t for every step of the token).
#pragma once

#include "memories/grid/outer_product_grid.hpp"

namespace memcap {

class DeltaProductGrid final : public OuterProductGrid {
public:
    DeltaProductGrid(const MemoryShape& shape, double alpha, double beta, int steps, const std::string& phi, int nu, Rng& rng)
        : OuterProductGrid(shape, phi, nu, /*normalise=*/true, rng), alpha_(static_cast<float>(alpha)),
          beta_(static_cast<float>(beta)), steps_(steps) {}

    void write(ConstVecRef key, ConstVecRef value) override { step(key, value, alpha_, beta_); }
    void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) override;

protected:
    /// No causal backward (the entry does not declare causal_backward): its n_h-step or
    /// corrected write is not one step S diag(a) + u φᵀ.
    WriteStep write_step(ConstVecRef, const TokenGate&) const override {
        throw std::logic_error("deltaproduct has no causal backward pass");
    }
    void write_backward(ConstMatRef, ConstMatRef, const RowMat&, MatRef) const override {
        throw std::logic_error("deltaproduct has no backward pass");
    }

private:
    void step(ConstVecRef key, ConstVecRef value, float alpha, float beta);

    float alpha_, beta_;
    int steps_;
};

}  // namespace memcap
