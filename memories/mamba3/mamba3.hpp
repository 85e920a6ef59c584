// memcap/memories/mamba3/mamba3.hpp — Mamba-3's SISO state: Mamba-2's scalar-decay state with the
// exponential-trapezoidal write and complex (rotary) state transitions.
//
// Stores:       S, d_v × d_φ (Mamba-2's state, S = 0 after reset); the previous written token's
//               value v' (d_v) and key features φ' (d_φ), which the trapezoidal write mixes into
//               the next step (0 after reset).
// Write:        per pair (k, v), φ = φ(k), with the step Δ (the salience step, or the write gate),
//               α = ρ^Δ (or exp(log decay)), the rotation R = R(Δ θ) and the rule's weights
//                   β = (1 − λ) Δ α,   γ = λ Δ
//                   S ← (α S + β v' φ'ᵀ) Rᵀ + γ v φᵀ,   then v' ← v, φ' ← φ.
//               Lahoti et al. 2026, the exponential-trapezoidal recurrence
//                   h_t = α_t h_{t−1} + β_t B_{t−1} x_{t−1} + γ_t B_t x_t
//               (α_t = e^{Δ_t A_t}, β_t = (1 − λ_t) Δ_t α_t, γ_t = λ_t Δ_t; λ_t = 1 is Mamba-2's
//               exponential-Euler step) with the complex transition e^{Δ_t (A_t + iθ_t)}: the state's
//               d_φ channels taken as d_φ/2 complex numbers (channels 2j, 2j + 1), each turned by
//               its angle per step — the term carried from the previous token is propagated
//               through the same transition as the state, so it turns with it. The paper's h is
//               d_state × headdim and its read C_tᵀ h_t; memcap's S = hᵀ (d_v = headdim rows,
//               d_φ = d_state columns: B = φ(k), x = v, C = φ(q)), so a rotation of h's rows is
//               one of S's columns.
// Rotation:     untrained, θ is a constant rate (the setting `theta`), spread over the pairs as
//               RoPE spreads its frequencies: pair j turns by Δ θ 10000^{−j/P} a step (P = floor(d_φ/2);
//               an odd last channel does not turn). The paper computes θ_t from the token; memcap's
//               untrained memories derive no gate from random projections of random inputs
//               (memories/README.md), so the angle is the rate times the token's Δ.
//               Equivalently (the paper's "RoPE trick"): a linear-attention sum whose keys and
//               queries are turned by the cumulative angles, B̃_i = R(Θ_i)ᵀ φ_i, C̃_t = R(Θ_t)ᵀ φ(q).
//               memcap turns S itself, so it keeps no cumulative angle.
// Read:         S φ(q) (y_t = C_tᵀ h_t, the real form of the complex read).
// state_floats: d_v·d_φ + d_v + d_φ (S, and the previous token's x and B that the trapezoidal
//               write needs), d_φ = floor((B − d_v) / (d_v + 1)); d_k without a budget.
// Parameters:   rho = 1 (decay per full step; A = log ρ), lambda = 0.5 (λ ∈ (0, 1]), theta = 0.1
//               (the fastest pair's angle per full step, radians, ≥ 0), gate = salience (salience|none).
//               φ is `proj` (feature_map.hpp), not normalised. Not built: MIMO (rank-r writes).
// Special cases: λ = 1 and θ = 0 is Mamba-2 (`selective`), the same products: equal within float rounding on
//               the same features. With Δ = 1 on every token the trapezoidal write leaves the
//               state of the Euler write with the newest pair weighted λ (each earlier token's
//               two parts, λ at its step and 1 − λ at the next, sum to 1).
// A skipped token (Δ = 0) leaves everything, v' and φ' too, exactly as it was: the trapezoid's
//               previous token is the last token written.
// Source:       Lahoti, Li, Chen, Wang, Bick, Kolter, Dao & Gu 2026, "Mamba-3: Improved Sequence
//               Modeling using State Space Principles" (ICLR 2026).
//
// State layout: [S row-major | v' | φ']: state()[i·d_φ + j] = S(i, j).
#pragma once

#include "core/rng.hpp"
#include "memories/grid/feature_map.hpp"
#include "memories/memory.hpp"

#include <optional>
#include <vector>

namespace memcap {

class Mamba3 final : public Memory {
public:
    /// d_φ at a shape: floor((B − d_v) / (d_v + 1)), d_k without a budget.
    static std::int64_t feature_budget(const MemoryShape& shape) {
        return shape.budget_floats ? (*shape.budget_floats - shape.d_value) / (shape.d_value + 1) : shape.d_key;
    }
    /// The angle per full step of pair j of `pairs`: theta · 10000^{−j/pairs}.
    static double pair_rate(double theta, std::int64_t j, std::int64_t pairs);

    /// rho ∈ (0, 1], lambda ∈ (0, 1], theta ≥ 0; gated: the salience step (else Δ = 1).
    Mamba3(const MemoryShape& shape, double rho, double lambda, double theta, bool gated, Rng& rng);

    void reset() override;
    void write(ConstVecRef key, ConstVecRef value) override;
    /// One write under a token's gates: Δ the write gate (else the salience step), α = exp(log
    /// decay) (else ρ^Δ), one scalar; Δ = 0 skips the token. β (a write strength) is refused.
    void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return state_.size(); }
    ConstStateView state() const override { return ConstStateView(state_.data(), state_.size()); }
    StateRef mutable_state() override { return StateRef(state_.data(), state_.size()); }
    std::int64_t param_floats() const override { return phi_.param_floats(); }

    int d_phi() const { return phi_.dim(); }

private:
    void step(ConstVecRef key, ConstVecRef value, float delta, std::optional<double> log_a);

    FeatureMap phi_;
    int d_v_;
    double rho_, lambda_;
    bool gated_;
    std::optional<int> feature_;  // the declared salience feature
    std::vector<double> rates_;   // per pair: the angle per full step (empty when theta = 0)
    Vec state_;                   // [S | v' | φ']
};

}  // namespace memcap
