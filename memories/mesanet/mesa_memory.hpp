// memcap/memories/mesanet/mesa_memory.hpp — MesaNet's memory: the optimal linear
// least-squares read of the pairs written.
//
// Stores:       H = Σ_t w_t φ_t φ_tᵀ (d_φ × d_φ) and G = Σ_t w_t v_t φ_tᵀ (d_v × d_φ), φ_t =
//               φ(k_t) of unit length, w_t = Δ_t Π_{s>t} γ^Δ_s (γ the decay, Δ the salience
//               step: 1 on tasks that declare no salience feature, so w_t = γ^(n−1−t)).
// Write:        H ← γ^Δ H + Δ φ φᵀ,  G ← γ^Δ G + Δ v φᵀ (von Oswald et al. 2025, eq. 6–7, with
//               the paper's data-dependent forget and input gates as γ^Δ and Δ).
// Read:         G (H + λ I)⁻¹ φ(q): the ridge-regression map from keys to values fitted to
//               every pair written, applied to the query (the paper's "Mesa layer", solved
//               exactly here — by a Cholesky factorisation in double — where the paper runs
//               conjugate gradients). For n ≤ d_φ linearly independent keys and λ → 0 it
//               returns each stored value exactly: no linear read-out of a d_φ-wide key
//               does better, so it is the ceiling of every linear memory of its key width.
// state_floats: d_φ(d_φ+1)/2 + d_v d_φ, d_φ the largest with d_φ(d_φ+1)/2 + d_v d_φ ≤ B (d_k
//               without a budget): H is symmetric, so only its unique entries (its lower
//               triangle) are stored and counted; φ = a fixed semi-orthogonal projection when
//               d_φ ≠ d_k (as `linear`'s proj).
// Parameters:   lambda = 0.01 (ridge, > 0; lambda=best races 0.001, 0.01, 0.1, 1, 10),
//               gamma = 1 ((0, 1]; gamma=best races 1, 0.999, 0.99), gate = salience.
// Source:       von Oswald et al. 2025, "MesaNet: Sequence Modeling by Locally Optimal
//               Test-Time Training".
//
// State layout: one vector: G row-major (d_v × d_φ floats), then H's lower triangle row by row
// (H(i, 0..i) at d_v d_φ + i(i+1)/2; d_φ(d_φ+1)/2 floats). The read unpacks H to a full
// symmetric matrix in double before its Cholesky factorisation.
#pragma once

#include "core/rng.hpp"
#include "memories/grid/feature_map.hpp"
#include "memories/memory.hpp"

#include <Eigen/Cholesky>

#include <optional>

namespace memcap {

class MesaMemory final : public Memory {
public:
    struct Dims {
        FeatureMap::Dims phi;
        std::int64_t d_value;
        std::int64_t min_budget;  // d_φ = 1: 1 + d_v
        std::int64_t state_floats() const { return std::int64_t{phi.dim} * (phi.dim + 1) / 2 + d_value * phi.dim; }
    };
    /// d_φ = the largest with d_φ(d_φ+1)/2 + d_v d_φ ≤ B, or d_k without a budget.
    static Dims size(const MemoryShape& shape);

    MesaMemory(const MemoryShape& shape, double lambda, double gamma, bool gated, Rng& rng);

    void reset() override { state_.setZero(); }
    void write(ConstVecRef key, ConstVecRef value) override { write_batch(key.transpose(), value.transpose()); }
    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    /// One write under a token's gates: H ← a H + Δ φ φᵀ, G ← a G + Δ v φᵀ with Δ the write
    /// gate (else the salience step) and a = exp(log decay) (else γ^Δ); Δ = 0 skips the token.
    /// A per-channel decay and β are refused.
    void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) override;
    void read(ConstVecRef query, VecRef out) const override;
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override;
    std::int64_t state_floats() const override { return state_.size(); }
    ConstStateView state() const override { return ConstStateView(state_.data(), state_.size()); }
    StateRef mutable_state() override { return StateRef(state_.data(), state_.size()); }
    std::int64_t param_floats() const override { return phi_.param_floats(); }

    /// R = Φ_q (H + λI)⁻¹ Gᵀ, so with Y = Φ_q (H + λI)⁻¹ and Z = W G (H + λI)⁻¹ (W = ∂L/∂R):
    /// ∂Φ_q = Z, ∂G = Wᵀ Y, ∂H = −Yᵀ Z; and per write t, ∂φ_t = w_t ((∂H + ∂Hᵀ) φ_t + ∂Gᵀ v_t);
    /// then back through the unit normalisation and φ.
    void backward(ConstMatRef keys, ConstMatRef values, ConstMatRef queries, ConstMatRef d_reads, MatRef d_keys,
                  MatRef d_queries) const override;

private:
    RowMat features(ConstMatRef x) const;
    void features_backward(ConstMatRef x, ConstMatRef d_f, MatRef d_x) const;
    /// H + λI in double, unpacked from H's stored lower triangle.
    Eigen::MatrixXd h_plus_lambda() const;
    /// The Cholesky factor of H + λI, in double.
    Eigen::LLT<Eigen::MatrixXd> factor() const;
    /// G, the first d_v × d_φ floats of the state (row-major).
    Eigen::Map<RowMat> g() { return Eigen::Map<RowMat>(state_.data(), d_value_, d_phi_); }
    Eigen::Map<const RowMat> g() const { return Eigen::Map<const RowMat>(state_.data(), d_value_, d_phi_); }

    FeatureMap phi_;
    double lambda_, gamma_;
    bool gated_;
    std::optional<int> feature_;
    int d_phi_, d_value_;
    Vec state_;  // G (d_v × d_φ, row-major), then H's lower triangle row by row
};

}  // namespace memcap
