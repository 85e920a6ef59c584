// memcap/memories/deep/online_mlp.hpp — a memory that is a model trained while it reads: what
// TTT-Linear (memories/ttt_linear/), TTT-MLP (memories/ttt_mlp/) and Titans' memory
// (memories/titans/) share.
//
// Stores:       the weights of f, a linear map (depth 1: f(x) = W φ(x), W: d_v × d_φ) or an
//               MLP of `depth` ≥ 2 layers d_k → h → … → h → d_v with GELU between layers and no
//               biases (keys and values are zero-mean codes); with momentum, a momentum buffer S
//               of the same shape; and the pairs of a mini-batch not yet complete (at most b − 1
//               keys and values). All of it is state: it is what changes while writing. The
//               initial weights W⁰ are fixed parameters drawn per seed (depth ≥ 2: first layer
//               N(0, 1) on unit keys, hidden layers N(0, 1/h); the last layer 0, so an empty
//               memory reads 0 as a grid does); reset() restores them.
// Write:        keys are normalised to unit length after φ (Titans' ℓ2-normalised keys; TTT's
//               keys are learned projections, here a scale the learning rate absorbs). Pairs
//               form mini-batches of b in write order, counted from reset; every gradient of a
//               batch is taken at the weights W_start the batch starts from (TTT's mini-batch
//               gradient descent; Titans' chunked form), on ℓ(W; k, v) = ‖f_W(k) − v‖²:
//                   S_t = μ S_{t−1} − θ ∇ℓ(W_start; k_t, v_t),   W_t = (1 − α) W_{t−1} + S_t
//               (Titans, Behrouz et al. 2025, eq. 13–14, with constant gates μ, α); without momentum
//               S_t = −θ ∇ℓ(W_start; k_t, v_t) (TTT: W_t = W_{t−1} − θ ∇ℓ at α = 0). A batch's
//               update is applied when its b-th pair arrives, `steps` times (each step's
//               gradients at the weights the last step left).
// Step size:    θ_t = lr / ‖a_t‖², a_t the last layer's input for pair t (its hidden features;
//               the unit key φ_t at depth 1, where θ_t = lr): one token-dependent rate for
//               every layer, as Titans' θ_t and TTT's η(x) are token-dependent. It makes lr
//               scale-free: the last layer's own step moves the read 2·lr of the way to v, as
//               the delta rule at β = 2·lr does, at any hidden width (a fixed θ diverges above
//               about 1/‖a‖², which grows with h).
// Read:         f_W(q), q through φ and normalised, with W the weights after every pair written:
//               pending pairs of an unfinished batch are applied to a copy for the read (TTT's
//               output for a token inside a mini-batch), never to the state.
// state_floats: weights (d_v d_φ at depth 1; h d_k + (depth − 2) h² + d_v h otherwise), doubled
//               with momentum, plus (b − 1)(d_k + d_v) for the pending batch; d_φ or h the
//               largest that fits the budget (d_φ = d_k, h = 4 d_k without a budget: TTT's and
//               Titans' expansion of 4).
// Departures:   no residual path x + LN(f(x)) (TTT) and no layer norm: a residual adds the key
//               to a read whose target is an unrelated value, and the norm's gain and bias
//               would be 2 d_v more weights; gates are constants raced on tuning seeds, not
//               functions of the token (an untrained model has nothing to compute them from).
// Failure:      weights that turn non-finite (a learning rate that diverges) throw
//               MemoryFailure naming the write: the cell's error row.
#pragma once

#include "core/rng.hpp"
#include "memories/grid/feature_map.hpp"
#include "memories/memory.hpp"

#include <vector>

namespace memcap {

class OnlineMlp final : public Memory {
public:
    /// The raced settings: inner learning rate θ, momentum μ (∈ [0, 1); 0 without a momentum
    /// buffer), forgetting α (∈ [0, 1)), gradient steps per mini-batch, mini-batch size b.
    struct Settings {
        double lr = 0.1;
        double momentum = 0.0;
        double forget = 0.0;
        int steps = 1;
        int batch = 1;
    };
    /// Its one sizing function's result.
    struct Dims {
        int depth = 2;
        std::int64_t hidden = 0;  // depth ≥ 2
        FeatureMap::Dims phi;     // the input map: proj to d_φ at depth 1, the identity otherwise
        std::int64_t d_key = 0, d_value = 0;
        bool momentum = false;     // a momentum buffer (Titans) doubles the weights' state
        std::int64_t pending = 0;  // b − 1: the pairs of an unfinished mini-batch held
        std::int64_t d_in() const { return phi.dim; }
        std::int64_t rows(int layer) const { return layer + 1 == depth ? d_value : hidden; }
        std::int64_t cols(int layer) const { return layer == 0 ? d_in() : hidden; }
        std::int64_t weight_floats() const;
        std::int64_t pending_floats() const { return pending * (d_key + d_value); }
        std::int64_t state_floats() const { return weight_floats() * (momentum ? 2 : 1) + pending_floats(); }
        /// The smallest budget: d_φ = 1 or h = 1, and the pending batch.
        std::int64_t min_budget() const;
        /// FLOPs of one forward pass of one input (the read), GELU counted as 8.
        double forward_flops() const;
        /// FLOPs of one write per pair and step: forward, backward, the update.
        double write_flops() const;
    };
    /// d_φ (depth 1) or h (depth ≥ 2) = the largest whose state fits the budget (0 when none
    /// does: the budget is below min_budget); d_k or 4 d_k without a budget.
    static Dims size(const MemoryShape& shape, int depth, bool momentum, int batch);

    OnlineMlp(const MemoryShape& shape, const Dims& dims, const Settings& settings, Rng& rng);

    void reset() override;
    void write(ConstVecRef key, ConstVecRef value) override { write_batch(key.transpose(), value.transpose()); }
    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    void read(ConstVecRef query, VecRef out) const override;
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override;
    std::int64_t state_floats() const override { return static_cast<std::int64_t>(state_.size()); }
    ConstStateView state() const override { return ConstStateView(state_.data(), state_.size()); }
    StateRef mutable_state() override { return StateRef(state_.data(), state_.size()); }
    /// The drawn initial weights (none at depth 1, where W⁰ = 0) and φ's projection.
    std::int64_t param_floats() const override {
        return (dims_.depth > 1 ? static_cast<std::int64_t>(initial_.size()) : 0) + phi_.param_floats();
    }

private:
    using WeightMap = Eigen::Map<RowMat>;
    using ConstWeightMap = Eigen::Map<const RowMat>;
    /// Layer `layer`'s weights (or, with `momentum`, its momentum) inside the state vector `st`.
    WeightMap weights(Vec& st, int layer, bool momentum = false) const;
    ConstWeightMap weights(const Vec& st, int layer) const;
    /// φ of the rows of x, normalised.
    RowMat inputs(ConstMatRef x) const;
    /// Forward pass of the rows x (already through `inputs`) with the weights in `st`; when asked,
    /// the pre-activations z[l] (layers 0..depth−2) and every layer's input a[l] (a[0] = x,
    /// a[l] = gelu(z[l−1])). Returns f(x).
    RowMat forward(const Vec& st, const RowMat& x, std::vector<RowMat>* z, std::vector<RowMat>* a) const;
    /// One update of the mini-batch (rows of x, through `inputs`, and v) on the state `st`.
    void update(Vec& st, const RowMat& x, ConstMatRef v) const;
    /// `steps` updates of a batch on the state `st`.
    void apply_batch(Vec& st, ConstMatRef keys, ConstMatRef values) const;
    /// The weights every read sees: the state's, or, with pairs pending, a copy with them applied.
    const Vec& read_state(Vec& scratch) const;
    Eigen::Map<RowMat> pending_keys();
    Eigen::Map<RowMat> pending_values();

    Dims dims_;
    Settings settings_;
    FeatureMap phi_;
    std::vector<std::int64_t> offset_;  // where each layer's weights start in the state
    std::int64_t weights_ = 0;          // weight floats
    Vec initial_;                       // W⁰, the weights after reset (parameters)
    Vec state_;                         // weights, then (with momentum) S, then the pending pairs
    std::int64_t pending_ = 0;          // pairs of the unfinished batch held
    std::int64_t writes_ = 0;           // since reset, to name a failing write
};

}  // namespace memcap
