// memcap/memories/delta/delta_grid.hpp — delta-rule outer-product grid (fast weights with editing).
//
// Stores:       one grid M of d_v × d_φ floats (M = 0 after reset).
// Write:        M += β_w (v − M φ(k)) φ(k)ᵀ, one pass in write order; φ(k) is
//               normalised to unit length, so β_w = 1 replaces the value stored
//               under k by v (the old read of k is subtracted before writing).
// Read:         M φ(q), φ(q) normalised the same way.
// state_floats: d_v × d_φ, exactly as `linear` (d_φ = floor(B / d_v), or d_k
//               without a budget).
// Parameters:   beta = 1 (real in (0, 2]: the update contracts for 0 < β_w < 2),
//               phi = proj (proj|dpfp), nu = 1. Minimum budget as `linear`.
// Source:       Schlag, Irie & Schmidhuber 2021, "Linear Transformers Are
//               Secretly Fast Weight Programmers" (ICML), §4.1; Widrow & Hoff 1960.
//
// Backward:     the episode's (backward: keys and queries) and the causal form's
//               (causal_backward: queries, keys, values and the per-token β; OuterProductGrid).
//
// State layout: M row-major, state()[i * d_φ + j] = M(i, j).
#pragma once

#include "memories/grid/outer_product_grid.hpp"

namespace memcap {

class DeltaGrid final : public OuterProductGrid {
public:
    DeltaGrid(const MemoryShape& shape, double beta, const std::string& phi, int nu, Rng& rng)
        : OuterProductGrid(shape, phi, nu, /*normalise=*/true, rng), beta_(static_cast<float>(beta)) {}

    void write(ConstVecRef key, ConstVecRef value) override;
    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    /// One write with the token's step β_t in place of β_w (the only gate input it takes).
    void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) override;

protected:
    /// M += β_t (v − M φ) φᵀ: the delta form, b = β_t (the token's β, else β_w), no decay
    /// (causal_backward, OuterProductGrid: ∂β_t differentiated).
    WriteStep write_step(ConstVecRef value, const TokenGate& gate) const override;
    /// Back through the recurrence, last write first: with u_t = β(v_t − M_{t−1} φ_t)
    /// (recorded by the same chunked pass write_batch runs) and M_{t−1} = M_t − u_t φ_tᵀ,
    ///     ∂u_t = G φ_t,  ∂φ_t = Gᵀ u_t − β M_{t−1}ᵀ ∂u_t,  G ← G − β ∂u_t φ_tᵀ,
    /// G = ∂L/∂M_t starting from ∂L/∂M of the final state.
    void write_backward(ConstMatRef keys, ConstMatRef values, const RowMat& d_grid, MatRef d_keys) const override;

private:
    /// write_batch's chunked pass on `grid` (from the φ rows `f`); when `updates` is
    /// given, row t of it receives u_t. The one definition of the batched write.
    void write_chunks(const RowMat& f, ConstMatRef values, RowMat& grid, RowMat* updates) const;

    float beta_;
};

}  // namespace memcap
