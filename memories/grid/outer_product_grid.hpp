// memcap/memories/grid/outer_product_grid.hpp — what the three grid memories share.
//
// `linear`, `delta` and `selective` all hold one matrix M of d_v × d_φ floats
// (row-major: state()[i * d_φ + j] = M(i, j)), take keys through the same
// fixed feature map φ (feature_map.hpp; d_φ bought by the budget as below),
// and read M φ(q). They differ only in how they write, so a grid backend
// derives from OuterProductGrid and implements write / write_batch; reset,
// state, read and read_batch come from here. `normalise` makes φ(x) unit
// length on both write and read (the delta rule's reading).
//
// The causal backward (Memory::causal_backward) is here too, for every grid: the grids'
// writes are all one step S_t = S_{t−1} diag(a_t) + u_t φ_tᵀ, u_t = b_t v_t (additive) or
// b_t (v_t − S_{t−1} e_t) (delta; e_t = a_t ⊙ φ_t decay first, else φ_t), read o_t = S_t φ(q_t);
// each grid says how its a_t and b_t follow from a token's gate inputs (write_step), and
// the backward runs the grid's own writes (causal_by_token's) and differentiates that step.
#pragma once

#include "core/rng.hpp"
#include "memories/grid/feature_map.hpp"
#include "memories/memory.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace memcap {

class OuterProductGrid : public Memory {
public:
    /// φ's largest output dimension for a shape: floor(B / d_v); without a budget d_k, or for
    /// the Taylor map 1 + d_k + d_k(d_k + 1)/2 (its natural size: y = k, no projection).
    static std::int64_t feature_budget(const MemoryShape& shape, const std::string& phi) {
        if (shape.budget_floats) return *shape.budget_floats / shape.d_value;
        const std::int64_t d = shape.d_key;
        return phi == "taylor" ? 1 + d + d * (d + 1) / 2 : d;
    }
    /// A grid's dimensions at a shape: its one sizing function (linear, delta and
    /// selective), used by the constructor (through φ's), the table's cost models and
    /// minimum budget, and `memcap list`.
    struct Dims {
        FeatureMap::Dims phi;     // φ: d_φ = phi.dim
        std::int64_t d_value;     // rows of the grid
        std::int64_t min_budget;  // φ's smallest dimension × d_v
        std::int64_t state_floats() const { return d_value * phi.dim; }
    };
    static Dims size(const MemoryShape& shape, const std::string& phi, int nu) {
        return {FeatureMap::size(phi, shape.d_key, feature_budget(shape, phi), nu), shape.d_value,
                FeatureMap::min_dim(phi, nu) * shape.d_value};
    }

    void reset() override { grid_.setZero(); }
    std::int64_t state_floats() const override { return grid_.size(); }
    ConstStateView state() const override { return ConstStateView(grid_.data(), grid_.size()); }
    StateRef mutable_state() override { return StateRef(grid_.data(), grid_.size()); }
    std::int64_t param_floats() const override { return phi_.param_floats(); }

    void read(ConstVecRef query, VecRef out) const override {
        thread_local RowMat f;  // (a read per token of a causal pass: no allocation each time)
        features_into(query.transpose(), f);
        out.noalias() = grid_ * f.transpose();
    }
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override {
        require_no_hidden(options);
        if (features_are_keys()) {  // the same product, without a copy of the queries
            out.noalias() = queries * grid_.transpose();
            return;
        }
        const RowMat f = features(queries);
        out.noalias() = f * grid_.transpose();
    }

    /// Memory::backward for every grid: the read's part (R = φ(Q) Mᵀ) is here, the
    /// write's part is each grid's write_backward; φ's (and its normalisation's) backward
    /// is features_backward.
    /// Memory::causal_backward for every grid. It takes S_0 … S_T that causal_for_backward kept
    /// from these very inputs, or else resets and writes the tokens with the grid's own
    /// write / write_gated (causal_by_token's writes; a read changes no state), keeping S_{t−1} of
    /// every token when T + 1 states fit in backward_saved_floats(); past that in segments of
    /// ⌈√T⌉ tokens (each segment's start state kept, the segment written again on the way back:
    /// about 2√T states) — and for t from the last, in one pass over the rows of G, S_{t−1} and S_t:
    ///     G += ∂o_t φ(q_t)ᵀ,  ∂φ(q_t) = S_tᵀ ∂o_t                       (the read after write t)
    ///     ∂u = G φ_t,  ∂φ_t = Gᵀ u_t,  ∂a_j = Σ_i G_ij (S_{t−1})_ij
    ///     additive: ∂v_t = b ∂u, ∂b = ∂u · v_t;  G ← G diag(a)
    ///     delta:    r = S_{t−1} e, ∂v_t = b ∂u, ∂b = ∂u · (v_t − r), ∂r = −b ∂u,
    ///               ∂e = S_{t−1}ᵀ ∂r (to φ_t, and to a through e = a ⊙ φ_t);  G ← G diag(a) + ∂r eᵀ
    /// with G = ∂L/∂S_t, then ∂φ → ∂q, ∂k through φ and its normalisation (features_backward).
    /// The gates: a = exp(log_decay) gives ∂log_decay_j = a_j ∂a_j (one column: Σ_j); β and Δ
    /// through b's and a's derivatives (WriteStep). Δ = 0 exactly with a decay input skips the
    /// token and its decay (a jump in Δ): its key, value and gate gradients are 0. The grid is left in
    /// the final state of those writes (causal_by_token's; causal()'s up to rounding where a grid
    /// overrides it, as linear's chunks do). The row pass's sums are fixed chains of madds
    /// (core/simd.hpp), the same bits at any vector width; φ's backward and a one-column decay's
    /// sum over the channels are Eigen's.
    void causal_backward(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates,
                         ConstMatRef d_out, CausalGrads& grads) override;
    /// causal_by_token, keeping every token's state when asked (causal_for_backward), from the zero
    /// state, and T + 1 states fit in backward_saved_floats(); a grid with a faster causal form
    /// (linear's chunks) overrides this and keeps nothing.
    void causal(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates, MatRef out) override;
    /// causal() keeping the states, with the keys, values and gate inputs they came from: a
    /// causal_backward on the same inputs next (bit for bit; compared, not assumed) uses them
    /// instead of writing the tokens again. Any other call of causal() or causal_backward() drops them.
    void causal_for_backward(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates,
                             MatRef out) override;
    /// Whether states kept by causal_for_backward are held for the next causal_backward.
    bool holds_kept_states() const { return kept_.valid; }
    /// The state floats under which causal_backward keeps every token's state (T + 1 states);
    /// past it, segments (see causal_backward). 2^22 (16 MB): at the trained study's sizes the
    /// whole sequence. Tests set it small to cover the segments.
    Eigen::Index backward_saved_floats() const { return backward_saved_floats_; }
    void set_backward_saved_floats(Eigen::Index floats) { backward_saved_floats_ = std::max<Eigen::Index>(1, floats); }
    /// The widths d_φ at which causal_backward's pass over the rows is compiled for that width (the
    /// row and the sums held in registers; the grids' d_φ at 256 and 1024 floats with d_v = 32, and
    /// Based's Taylor map there): the same arithmetic as the reference loop every other width runs.
    static constexpr int kUnrolledWidths[] = {4, 6, 8, 16, 28, 32, 64};
    /// Off: the reference loop at every width (tests compare the two bit for bit).
    void set_unrolled_backward(bool on) { unrolled_backward_ = on; }

    void backward(ConstMatRef keys, ConstMatRef values, ConstMatRef queries, ConstMatRef d_reads, MatRef d_keys,
                  MatRef d_queries) const override {
        const RowMat fq = features(queries);
        const RowMat d_fq = d_reads * grid_;               // m × d_φ
        const RowMat d_grid = d_reads.transpose() * fq;    // d_v × d_φ: ∂L/∂M of the final state
        features_backward(queries, d_fq, d_queries);
        write_backward(keys, values, d_grid, d_keys);
    }

protected:
    using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;
    /// One write as causal_backward differentiates it: S ← S diag(a) + u φᵀ (see causal_backward).
    struct WriteStep {
        bool frozen = false;       // skipped at Δ = 0 with a decay input: not differentiated (zero)
        bool delta = false;        // u = b (v − S e), else u = b v
        bool decay_first = false;  // e = a ⊙ φ (with decays), else e = φ
        RowVec a;                  // the channel decays (d_φ entries; equal for a scalar decay); empty: none
        float b = 1.0f;            // the write strength
        float db_dbeta = 0.0f;     // ∂b/∂β (the token's β input)
        float db_dgate = 0.0f;     // ∂b/∂Δ (the token's write gate input)
        RowVec dlog_a_dgate;       // ∂ log a_j / ∂Δ (empty: a does not depend on Δ)
    };
    /// How the grid writes (value, under `gate`) — exactly what its write_gated (or write, for
    /// an empty gate) does to the state, as a WriteStep. Called after that write succeeded.
    virtual WriteStep write_step(ConstVecRef value, const TokenGate& gate) const = 0;

    /// The write's part of backward: given ∂L/∂M of the state write_batch(keys, values)
    /// left (from M = 0 after reset), writes ∂L/∂keys. Grids without a backward pass
    /// (none today) would throw std::logic_error.
    virtual void write_backward(ConstMatRef keys, ConstMatRef values, const RowMat& d_grid, MatRef d_keys) const = 0;

    /// The backward pass of features(x): d_x from d_f = ∂L/∂features(x).
    void features_backward(ConstMatRef x, ConstMatRef d_f, MatRef d_x) const {
        if (!normalise_) return phi_.backward(x, d_f, d_x);
        RowMat raw(x.rows(), phi_.dim());
        phi_.apply(x, raw);
        phi_.backward(x, unit_rows_backward(raw, d_f), d_x);
    }

    OuterProductGrid(const MemoryShape& shape, const std::string& phi, int nu, bool normalise, Rng& rng,
                     double taylor_scale = 1.0)
        : phi_(phi, shape.d_key, feature_budget(shape, phi), nu, rng, taylor_scale), normalise_(normalise),
          grid_(RowMat::Zero(shape.d_value, phi_.dim())) {}

    /// Whether features(x) is x itself (φ passes keys through, rows not normalised).
    bool features_are_keys() const { return !normalise_ && phi_.passes_through(); }

    /// φ of every row of x (n × d_k → n × d_φ), rows normalised when asked.
    RowMat features(ConstMatRef x) const {
        RowMat f;
        features_into(x, f);
        return f;
    }
    /// features(x) into f, whose storage is reused when it has the size already (the per-token
    /// writes and reads keep one f per thread).
    void features_into(ConstMatRef x, RowMat& f) const {
        f.resize(x.rows(), phi_.dim());
        phi_.apply(x, f);
        if (normalise_) normalise_rows(f);
    }

    FeatureMap phi_;
    bool normalise_;
    RowMat grid_;  // d_v × d_φ
    Eigen::Index backward_saved_floats_ = Eigen::Index{1} << 22;
    bool unrolled_backward_ = true;

private:
    /// What causal_for_backward kept: the states S_0 … S_T and the inputs that wrote them.
    struct Kept {
        bool asked = false;  // inside causal_for_backward
        bool valid = false;
        RowMat keys, values;
        TokenGates gates;
        std::vector<float> states;
    };
    /// Whether kept_ holds the states of exactly these inputs' writes (then valid until the next call).
    bool kept_for(ConstMatRef keys, ConstMatRef values, const TokenGates& gates) const;
    Kept kept_;
};

}  // namespace memcap
