// memcap/memories/grid/gated_grid.hpp — the gated and delta-family grids of today's
// recurrent layers: one recurrence, five published models.
//
// Stores:       one matrix S of d_v × d_φ floats (S = 0 after reset), as `linear`.
// Write:        per pair (k, v), with φ = φ(k) and the channel decays a ∈ (0, 1]^d_φ:
//                 additive (RetNet, GLA):      S ← S·diag(a) + b v φᵀ
//                 delta, decay first (Gated DeltaNet, KDA):
//                                              S ← S·diag(a) (I − b φ φᵀ) + b v φᵀ
//                                                = S·diag(a) + b (v − S·diag(a) φ) φᵀ
//                 delta, removal first (RWKV-7's generalised delta rule with its
//                 removal key κ̂ = φ and write key k̃ = a_icl·φ):
//                                              S ← S (diag(a) − b φ φᵀ) + b v φᵀ
//                                                = S·diag(a) + b (v − S φ) φᵀ
//               The delta forms take φ normalised to unit length (as `delta`); the
//               additive forms take φ as `linear` does, so a = 1 is exactly `linear`
//               and, for the delta forms, `delta` at β = b.
// Decays:       scalar (RetNet, Gated DeltaNet): a_j = α for every channel; per channel
//               (GLA, KDA, RWKV-7): a_j = α^(j / (d_φ − 1)), log-spaced from 1 (channel 0
//               keeps everything) to α (the last channel): an untrained model's spread of
//               time scales, as RetNet's heads and S4D's initialisation spread theirs;
//               the raced constant is the fastest channel's decay α.
// Gates:        with gate=salience and a task that declares a salience feature
//               (core/inputs.hpp, grid/salience.hpp), the step Δ(v) ∈ [0, 1] scales the
//               write, b_t = b Δ, and the decay, a_t = a^Δ: Δ = 0 skips a filler token
//               exactly (Mamba's selection; Gated DeltaNet's α_t, β_t; KDA's and RWKV-7's
//               data-dependent decays). Without a declared feature Δ = 1: the gates are
//               the raced constants. A gate is never derived from random projections of
//               random inputs.
// Step rule:    step=plain takes b = β; step=longhorn takes b = β / (1 + β ‖φ‖²)
//               (Longhorn, Liu et al. 2024: the closed-form online regression step);
//               with unit φ it is the plain rule at β / (1 + β).
// Read:         S φ(q), φ(q) normalised when the write's is.
// state_floats: d_v × d_φ, d_φ = floor(B / d_v) (d_k without a budget), as `linear`.
//
// Backward:     the episode's (backward: keys and queries; write_backward below) and the
//               causal form's (causal_backward: queries, keys, values, and each gate input
//               the family takes — log decay, one column or per channel, β, write gate —
//               through the same step; OuterProductGrid::causal_backward).
//
// The paper's orientation: Gated DeltaNet, KDA and RWKV-7 write their state as
// d_k × d_v (S_t = S_{t−1}(…) + k vᵀ, read qᵀ S) or d_v × d_k; memcap's is d_v × d_φ with
// reads S φ(q), so the papers' right multiplications by (I − β k kᵀ) and diag(α) act on
// the key side here, as written above.
//
// State layout: S row-major, state()[i * d_φ + j] = S(i, j).
#pragma once

#include "memories/grid/outer_product_grid.hpp"

#include <optional>

namespace memcap {

class GatedGrid final : public OuterProductGrid {
public:
    using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;
    struct Rule {
        enum class Form { additive, delta_decay_first, delta_removal_first };
        Form form = Form::additive;
        double alpha = 1.0;        // the (fastest channel's) decay, in (0, 1]
        bool per_channel = false;  // decays spread over channels (see the header)
        double beta = 1.0;         // write strength b (additive forms: 1)
        bool longhorn = false;     // b = β / (1 + β ‖φ‖²)
        bool gated = true;         // gate on the declared salience feature
        bool delta() const { return form != Form::additive; }
    };

    GatedGrid(const MemoryShape& shape, const Rule& rule, const std::string& phi, int nu, Rng& rng);

    void write(ConstVecRef key, ConstVecRef value) override;
    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    /// One write under a token's gate inputs (Memory::write_gated): a decay (one for every
    /// channel, or per channel for the per-channel rules) replaces a^Δ, β (delta forms only)
    /// replaces the rule's β (Longhorn's rule applied to it), the write gate replaces Δ.
    void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) override;

    /// The channel decays a (d_φ entries).
    const Vec& decays() const { return decays_; }

protected:
    /// One write as write_gated (or write) does it, as a WriteStep (causal_backward,
    /// OuterProductGrid): a = exp(log decay) (one for every channel, or per channel), else
    /// a^Δ (∂ log a_j/∂Δ = log a_j); b = β Δ, or β Δ/(1 + β) with step=longhorn (∂b/∂β =
    /// Δ/(1 + β)²); e = a ⊙ φ for the decay-first delta form, φ for removal first.
    WriteStep write_step(ConstVecRef value, const TokenGate& gate) const override;
    /// Back through the recurrence, last write first, from checkpoints of S taken every
    /// kCheckpoint writes of a forward pass (a decay makes reversing S_t → S_{t−1}
    /// unstable). With e_t = diag(a_t) φ_t (decay first) or φ_t (removal first),
    /// r_t = S_{t−1} e_t, u_t = b_t (v_t − r_t) and S_t = S_{t−1} diag(a_t) + u_t φ_tᵀ:
    ///     ∂u_t = G φ_t,  ∂r_t = −b_t ∂u_t,  ∂φ_t = Gᵀ u_t + E_t S_{t−1}ᵀ ∂r_t,
    ///     G ← G diag(a_t) + ∂r_t e_tᵀ
    /// with E_t = diag(a_t) or I, G = ∂L/∂S_t starting from ∂L/∂S of the final state
    /// (additive forms: u_t = b_t v_t, no r_t). The gates read only the values, so they
    /// carry no gradient to the keys; with unit φ, Longhorn's b is a constant.
    void write_backward(ConstMatRef keys, ConstMatRef values, const RowMat& d_grid, MatRef d_keys) const override;

private:
    /// One write of feature row f (normalised when the rule is a delta form) into `grid`.
    /// When `update` is given it receives u_t (zero for a skipped token).
    void step(RowMat& grid, const float* f, ConstVecRef value, Vec* update) const;
    /// The gate's Δ for a value (1 without a gate or a declared feature).
    float gate(ConstVecRef value) const;
    /// This write's channel decays a^Δ.
    RowVec decays_at(float delta) const;
    /// The write strength b for a step Δ (β: the token's, or the rule's when absent).
    float strength(float delta, std::optional<float> beta = std::nullopt) const;
    /// The update of `grid` by feature row f with decays `a` (null: none; `uniform`: one
    /// decay, a(0), for every channel) and strength b; `update` receives u_t when given.
    void apply(RowMat& grid, const float* f, ConstVecRef value, const RowVec* a, bool uniform, float b, Vec* update) const;

    Rule rule_;
    std::optional<int> feature_;
    Vec decays_;  // a_j
};

}  // namespace memcap
