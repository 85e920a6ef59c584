// memcap/harness/train/layer.hpp — a trainable sequence layer around one memory: the
// token-to-memory map each family publishes, trained through the memory's causal form.
//
// For T tokens x_0 .. x_{T−1} (rows of X, d_in wide), the layer computes
//
//   X        = E[token] (a learned embedding, V × d_in, for token tasks such as mqar),
//              or the episode's own vectors (vector tasks: a write token [k; v], a read token [q; 0])
//   P_q, P_k, P_v = X W_qᵀ, X W_kᵀ, X W_vᵀ                    (d wide: the memory's d_k = d_v = d)
//   Q, K, V  = conv_q(P_q), conv_k(P_k), conv_v(P_v)        a causal depthwise convolution of kernel 4
//              on each (y_t = Σ_{j<4} c_j ⊙ p_{t−j}), as flash-linear-attention's layers put it after
//              their projections (Based and H3 call it the short convolution). Every family gets it:
//              one layer pairs a key with the value after it only through it (zoology's MQAR
//              writes the pair as the key token, then the value token; without the shift the
//              write at the value token cannot see the key).
//   gates    = the family's input-dependent gates, computed from X (LayerRecipe, below), handed
//              to the memory as TokenGates
//   O        = memory.causal(Q, K, V, gates)                  (o_t read after the write at t)
//   N        = RMSNorm(O) ⊙ g (a learned gain), per token, as the output norm of fla's GLA,
//              DeltaNet, Gated DeltaNet and Mamba-2 layers; not for a cache (attention has none)
//   Y        = N W_oᵀ                                          (d_out wide)
//
// and a head turns Y at the scored tokens into a loss (trainer.hpp): for token tasks logits
// U y over the value symbols (U learned, untied from E), cross-entropy against the answer; for
// vector tasks softmax_j(−‖y − c_j‖² / τ) over the episode's candidates.
//
// The gates, per family (LayerRecipe::for_memory), as each paper builds them from the token:
//   mamba2, selective   Δ_t = softplus(w·x_t + b), log a_t = −Δ_t exp(A_log) (one decay for all
//                       channels), and the write gate 1 − e^{−Δ_t} (Mamba-2 writes Δ_t B x; memcap's
//                       write gate is bounded by 1, so the layer gives Δ_t saturated: ≈ Δ_t for
//                       small steps)
//   gated_deltanet      α_t as Mamba-2's decay (log α_t = −softplus(w·x_t + b) exp(A_log)) and
//                       β_t = sigmoid(w_β·x_t + b_β)
//   gla                 per-channel α_t from a low-rank map (rank 16): log α_t = logsigmoid(W_2 W_1 x_t + b) / 16
//   kda                 per-channel α_t from a low-rank map: log α_t = −softplus(W_2 W_1 x_t + b) exp(A_log);
//                       β_t = sigmoid
//   rwkv7               per-channel w_t: log w_t = −e^{−1/2} sigmoid(b + W_2 tanh(W_1 x_t)); a_t (memcap's
//                       rwkv7 takes one in-context rate per token) = sigmoid(w_β·x_t + b_β)
//   delta, deltanet     β_t = sigmoid(w_β·x_t + b_β)
//   retnet              none: its fixed γ (the memory's own decay), not input-dependent
//   linear and the rest none (the memory's own settings at every token)
// Per-channel decays have one entry per channel of the memory (d_φ for the grids).
//
// Backward by hand: through the head, the output projection and norm, Memory::causal_backward
// (the memory's own backward of its own causal forward), the gate maps, the convolutions, the
// projections and the embedding. Every parameter lives in one flat vector (Layer::theta, in
// groups), so the optimiser and the finite-difference tests see one array.
#pragma once

#include "core/rng.hpp"
#include "core/types.hpp"
#include "memories/memory.hpp"
#include "memories/registry.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace memcap::train {

/// How a family's gates are computed from its input (see the header).
struct LayerRecipe {
    using Decay = LayerGates::Decay;
    Decay decay = Decay::none;
    bool write_gate = false;  // 1 − e^{−Δ_t} with the scalar softplus decay (Mamba-2)
    bool beta = false;        // β_t = sigmoid(w·x + b)
    bool norm = true;         // RMSNorm on the memory's outputs
    bool conv = true;         // the short convolution on q, k, v

    /// The recipe of a memory: its entry's LayerGates, each gate kept only where the entry
    /// declares that gate input.
    static LayerRecipe for_memory(const MemoryEntry& entry);
    /// "Δ_t = softplus(w·x+b), ..." in words, for `memcap list` and the docs.
    std::string describe() const;
};

/// The layer's sizes.
struct LayerShape {
    int d_in = 0;      // width of the input tokens (the embedding's, or the vectors')
    int d = 0;         // the memory's d_k = d_v
    int d_out = 0;     // width of Y (the head's input)
    std::int64_t vocab = 0;   // > 0: token inputs through an embedding of this many symbols
    std::int64_t values = 0;  // > 0: a learned head over this many value symbols (U: values × d_out)
    int channels = 1;  // decay channels of the memory (per-channel decays)
    int rank = 16;     // of the per-channel decay maps (at most d_in)
    static constexpr int kConv = 4;
};

/// One named block of Layer::theta (rows × cols, row-major).
struct ParamGroup {
    std::string name;
    std::size_t offset = 0;
    Eigen::Index rows = 0, cols = 0;
    std::size_t size() const { return static_cast<std::size_t>(rows * cols); }
};

/// The intermediate values of one forward pass (kept for the backward pass).
struct LayerPass {
    RowMat x, pq, pk, pv, q, k, v, o, nrm, y;
    TokenGates gates;
    Vec z;              // scalar decay: w·x + b;  beta: its own pre-activation in zb
    Vec zb;
    RowMat h, hc, g;    // per-channel: W_1 x, its tanh (rwkv7) or itself, W_2 h + b
    Vec rms;            // 1 / sqrt(mean(o²) + ε) per token
};

class Layer {
public:
    /// A layer of `shape` and `recipe` with its initial parameters drawn from `init`.
    Layer(const LayerShape& shape, const LayerRecipe& recipe, Rng& init);
    /// A layer with given parameters (`theta`, in this shape's layout).
    Layer(const LayerShape& shape, const LayerRecipe& recipe, std::vector<float> theta);

    const LayerShape& shape() const { return shape_; }
    const LayerRecipe& recipe() const { return recipe_; }
    const std::vector<ParamGroup>& groups() const { return groups_; }
    std::vector<float>& theta() { return theta_; }
    const std::vector<float>& theta() const { return theta_; }
    /// Floats of trained parameters.
    std::int64_t param_floats() const { return static_cast<std::int64_t>(theta_.size()); }
    /// The group called `name` (std::logic_error when there is none).
    const ParamGroup& group(const std::string& name) const;
    /// The parameter floats of `shape` and `recipe` (without building the layer).
    static std::int64_t count(const LayerShape& shape, const LayerRecipe& recipe);

    /// The forward pass over one sequence: `tokens` (shape.vocab > 0) or `inputs` (T × d_in)
    /// through `memory` (reset first), up to Y (pass.y, T × d_out). `for_backward`: backward()
    /// of this pass comes next (the memory's causal_for_backward: the same outputs, and the
    /// memory may keep what its backward would compute again).
    void forward(Memory& memory, const std::vector<int>& tokens, const RowMat& inputs, LayerPass& pass,
                 bool for_backward = false) const;
    /// The backward pass of `pass` given dY = ∂L/∂Y (T × d_out): adds ∂L/∂θ into `grad`
    /// (theta's layout). Runs the memory's causal_backward (which resets it and runs its
    /// writes again, unless the forward kept their states).
    void backward(Memory& memory, const std::vector<int>& tokens, LayerPass& pass, const RowMat& dy,
                  std::vector<float>& grad) const;

    /// The head over value symbols (shape.values > 0): logits U y_t for one token's output.
    Eigen::Map<const RowMat> head() const;
    Eigen::Map<RowMat> block(std::vector<float>& v, const std::string& name) const;
    Eigen::Map<const RowMat> block(const std::vector<float>& v, const std::string& name) const;

private:
    Layer(const LayerShape& shape, const LayerRecipe& recipe, std::vector<float> theta, int);  // layout only (count)
    void layout();
    void init(Rng& rng);
    LayerShape shape_;
    LayerRecipe recipe_;
    std::vector<ParamGroup> groups_;
    std::vector<float> theta_;
};

}  // namespace memcap::train
