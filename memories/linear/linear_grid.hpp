// memcap/memories/linear/linear_grid.hpp — linear-attention / fast-weight outer-product grid.
//
// Stores:       one grid M of d_v × d_φ floats (M = 0 after reset).
// Write:        M += v φ(k)ᵀ.
// Read:         M φ(q).
// state_floats: d_v × d_φ, d_φ = floor(B / d_v) (proj) or 2ν·floor(B / (2ν d_v))
//               (dpfp); without a budget d_φ = d_k, the essays' d × d grid.
// Parameters:   phi = proj (proj|dpfp), nu = 1 (DPFP's ν). φ is the identity
//               when d_φ = d_k; see feature_map.hpp. Minimum budget: d_v (proj),
//               2ν·d_v (dpfp).
// Source:       Katharopoulos et al. 2020 ("Transformers are RNNs"); Schlag,
//               Irie & Schmidhuber 2021 (fast weights); essay 004 Part 3.
//
// Backward:     the episode's (backward: keys and queries) and the causal form's
//               (causal_backward: queries, keys, values; OuterProductGrid) through φ.
//
// State layout: M row-major, so state()[i * d_φ + j] = M(i, j).
#pragma once

#include "memories/grid/outer_product_grid.hpp"

namespace memcap {

class LinearGrid final : public OuterProductGrid {
public:
    /// taylor_scale: phi=taylor's input scale (FeatureMap; Based's raced scale).
    LinearGrid(const MemoryShape& shape, const std::string& phi, int nu, Rng& rng, double taylor_scale = 1.0)
        : OuterProductGrid(shape, phi, nu, /*normalise=*/false, rng, taylor_scale) {}

    void write(ConstVecRef key, ConstVecRef value) override;
    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    /// The causal form in chunks of 64 tokens (no gate inputs: it takes none): per chunk from
    /// the state M, O = φ(Q) Mᵀ + tril(φ(Q) φ(K)ᵀ) V (the diagonal included: o_t reads the
    /// state after the write at t), then M += Vᵀ φ(K) — linear attention's chunked form.
    void causal(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates, MatRef out) override;

protected:
    /// M += v φᵀ: b = 1, no decay, no gate inputs (causal_backward, OuterProductGrid).
    WriteStep write_step(ConstVecRef, const TokenGate&) const override { return WriteStep{}; }
    /// M = Σ v_i φ(k_i)ᵀ: ∂L/∂φ(k_i) = ∂L/∂M ᵀ v_i.
    void write_backward(ConstMatRef keys, ConstMatRef values, const RowMat& d_grid, MatRef d_keys) const override;
};

}  // namespace memcap
