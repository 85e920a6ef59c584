// memcap/memories/selective/selective_state.hpp — selective state model (Mamba / gated linear attention form).
//
// Stores:       one matrix S of d_v × N floats (S = 0 after reset).
// Write:        S ← a(x) S + b(x) v φ(k)ᵀ, with an input-dependent step Δ(x):
//                   b(x) = Δ(x),   a(x) = ρ^Δ(x)
//               Δ = 1 writes the pair and decays the state by ρ; Δ = 0 leaves S
//               exactly as it was — the token is skipped. This is the
//               zero-order-hold discretisation of Mamba (Gu & Dao 2023, eq. 4,
//               Ā = exp(ΔA), B̄ ≈ ΔB, with A = log ρ) with a scalar decay as in
//               Mamba-2; Theorem 1 of the Mamba paper is its 1-D case.
// Read:         S φ(q).
// state_floats: d_v × d_φ, d_φ as `linear` (floor(B / d_v); d_k without a budget).
// Parameters:   rho = 1 (real in (0, 1]; 1 = no decay), gate = salience
//               (salience|none), phi = proj (proj|dpfp), nu = 1.
//               Minimum budget as `linear`.
//
// The gate, computed without training: Δ(x) = 0 when v_f ≠ 0 (or v = 0), else 1,
// where f is the salience feature the task declares (InputDescription::
// salience_feature, core/inputs.hpp): the value coordinate that marks a token's
// class (memories/grid/salience.hpp). Selective copying declares f = 0: its blank
// (noise) token is e₀, so Δ = 0 and it is skipped; content codes have v₀ = 0, so
// Δ = 1. When the task declares no salience feature (associative recall, lag
// recall, copying: random values; salient_recall, whose gate is the task's, for
// every memory alike: tasks/stream_recall.hpp), the gate has nothing to select on and Δ = 1 for every write. gate=none
// sets Δ = 1 for every write on every task: the same memory without selection
// (a decaying grid), for ablations.
//
// Source:       Gu & Dao 2023, "Mamba: Linear-Time Sequence Modeling with
//               Selective State Spaces"; Dao & Gu 2024 (Mamba-2 / SSD); Yang et
//               al. 2024 (gated linear attention).
//
// Backward:     the episode's (backward: keys and queries) and the causal form's
//               (causal_backward: queries, keys, values, the log decay and the write gate;
//               OuterProductGrid).
//
// State layout: S row-major, state()[i * d_φ + j] = S(i, j).
#pragma once

#include "memories/grid/outer_product_grid.hpp"

#include <optional>

namespace memcap {

class SelectiveState final : public OuterProductGrid {
public:
    SelectiveState(const MemoryShape& shape, double rho, bool gated, const std::string& phi, int nu, Rng& rng)
        : OuterProductGrid(shape, phi, nu, /*normalise=*/false, rng), rho_(rho), gated_(gated),
          feature_(shape.salience_feature) {}

    void write(ConstVecRef key, ConstVecRef value) override;
    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    /// One write under a token's gates: S ← a S + Δ v φ(k)ᵀ with Δ the write gate (else the
    /// salience step) and a = exp(log decay) (else ρ^Δ); Δ = 0 skips the token. One decay
    /// for the whole state (Mamba-2's scalar per head): a per-channel decay and β are refused.
    void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) override;

    /// The step Δ(v) for one value (see the header comment): 1 without a gate or
    /// without a declared salience feature.
    float step(const float* value, int d_value) const;

protected:
    /// S ← a S + Δ v φᵀ as a WriteStep (causal_backward, OuterProductGrid): b = Δ, a = exp(log
    /// decay) or ρ^Δ (∂ log a/∂Δ = log ρ); log decay and the write gate differentiated.
    WriteStep write_step(ConstVecRef value, const TokenGate& gate) const override;
    /// S = Σ w_i v_i φ(k_i)ᵀ (the gates read only the values): ∂L/∂φ(k_i) = w_i ∂L/∂Sᵀ v_i.
    void write_backward(ConstMatRef keys, ConstMatRef values, const RowMat& d_grid, MatRef d_keys) const override;

private:
    double rho_;
    bool gated_;
    std::optional<int> feature_;  // the value coordinate the gate reads (the declared salience feature)
};

}  // namespace memcap
