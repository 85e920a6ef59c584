// memcap/memories/softmax/compressed_cache.hpp — two softmax caches that keep each pair in fewer
// floats rather than keeping fewer pairs: KIVI's quantised cache and MLA's latent cache. Both
// read as the softmax cache reads (softmax(β K q)ᵀ V over the pairs held, β = inf the hard
// argmax; softmax_cache.hpp), over the keys and values they reconstruct; both evict FIFO when
// full. (The eviction policies, kv_policy.hpp, keep other pairs at full precision instead.)
//
// KIVI (`kivi`; Liu et al. 2024, "KIVI: A Tuning-Free Asymmetric 2bit Quantization for KV
// Cache"). Stores: the pairs, the older ones quantised at b bits (b = 2, 4 or 8), asymmetric
// (min-max: a code c in 0..2^b − 1 reads c · scale + zero, scale and zero point per group, each
// an IEEE half as KIVI keeps them in fp16), the newest at full precision:
//   - keys per channel: the G tokens of a group share one (scale, zero) per channel;
//   - values per token: each token's d_v values in groups of G channels (the last one shorter),
//     one (scale, zero) per channel group (KIVI's one group size for both);
//   - a full-precision window (fp32 [k | v] rows) of the newest W ≥ R + G − 1 pairs: the newest R
//     (the setting `residual`) are always at full precision, and when the window is full the
//     oldest G of its pairs are quantised as one group (keys per channel need G tokens): the
//     window is quantised in groups as it fills, as KIVI's residual is. The pair leaves the
//     window with its key (KIVI moves a value out as soon as it leaves the newest R; here it
//     waits for its key's group, which keeps at most G − 1 more values at full precision, counted).
//   - when a new group finds Ng groups held, the oldest group is evicted (FIFO, G pairs at once).
//     KIVI itself never evicts (it compresses a cache that grows); the byte budget makes it.
// A group is one bit stream, 31 bits to each 32-bit word of the state: bit 30 of a word is kept
// clear so the word read as a float is finite (|x| < 2), the state a vector of finite floats.
// Group words gw = ceil((32 d_k + G (d_k + d_v) b + 32 G ceil(d_v / G)) / 31).
// state_floats: (groups held) gw + (window pairs held) (d_k + d_v) ≤ B, with Ng = floor((B − (R + G
//               − 1)(d_k + d_v)) / gw) groups (at least 0) and W = floor((B − Ng gw) / (d_k + d_v))
//               (the budget's rest lengthens the window). Ng = 0 — the budget holds no group beside
//               the window — is the plain cache: a FIFO of W = floor(B / (d_k + d_v)) pairs at full
//               precision, nothing quantised. Without a budget it never evicts (W = R + G − 1).
//               Minimum budget: max(R, 1) (d_k + d_v) (the window R; a larger window is refused).
// Reads: the dequantised keys and values (c · scale + zero) of the groups and the window's rows.
//
// MLA (`mla`; DeepSeek-AI 2024, "DeepSeek-V2", multi-head latent attention). Stores: per pair a
// latent c = W_down [k; v] of r = max(1, floor(ρ (d_k + d_v))) floats (ρ the setting `latent`),
// the last C = floor(B / r) of them (FIFO); keys and values are reconstructed by up-projections,
// k̂ = W_uk c, v̂ = W_uv c. Untrained: W_down is a random orthonormal r × (d_k + d_v) projection of
// the pair (orthonormal rows, the QR of a Gaussian matrix, from the cell's parameter stream) and
// the up-projection [W_uk; W_uv] its transpose — the least-squares reconstruction from the latent —
// so the cache is a low-rank compression of the pairs; at ρ = 1 it keeps them (up to rounding).
// DeepSeek-V2's decoupled RoPE keys carry positions; memcap's pairs have none, so it is left out.
// state_floats: (stored latents) × r ≤ B. param_floats: W_down and [W_uk; W_uv], 2 r (d_k + d_v)
//               (parameters, never state). Minimum budget: r.
#pragma once

#include "memories/memory.hpp"
#include "memories/softmax/softmax_cache.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace memcap {

class KiviCache final : public Memory {
public:
    struct Dims {
        std::int64_t groups;       // Ng: quantised groups held at most; −1 = unbounded (no budget)
        std::int64_t window;       // W: full-precision pairs held at most
        std::int64_t group_words;  // gw: floats of one group
        std::int64_t row;          // d_k + d_v
        std::int64_t pairs;        // pairs held at most, Ng G + W; −1 = unbounded
        std::int64_t state_floats; // Ng gw + W (d_k + d_v); −1 = unbounded
        std::int64_t min_budget;   // max(R, 1) (d_k + d_v)
    };
    /// The cache's dimensions at a shape (its one sizing function): `bits` b, `group` G, `residual` R.
    static Dims size(const MemoryShape& shape, int bits, int group, std::int64_t residual);
    /// Floats of state after `writes` writes since reset.
    static std::int64_t state_after(const Dims& dims, int group, std::int64_t writes);

    KiviCache(const MemoryShape& shape, double beta, int bits, int group, std::int64_t residual);

    void reset() override;
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override { reader_->read(query, out); }
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override;
    std::int64_t state_floats() const override;
    ConstStateView state() const override;

private:
    /// The window's oldest G pairs become a group (the oldest group evicted when Ng are held).
    void quantise_oldest();
    /// The reader holds the dequantised groups and the window's rows again, oldest first.
    void rebuild_reader();

    int d_key_, d_value_, bits_, group_;
    Dims dims_;
    double beta_;
    // The pairs as the reads see them: Ng = 0, the plain cache itself (its state is this cache's);
    // otherwise an unbounded cache of the dequantised pairs held (derived from the state).
    std::unique_ptr<SoftmaxCache> reader_;
    std::vector<float> buf_;        // the state (Ng > 0): [groups, oldest first | window rows, oldest first]
    std::int64_t groups_held_ = 0, window_held_ = 0;
    std::vector<float> dequantised_;  // the held groups' pairs as read, [k | v] rows, oldest first
};

class LatentCache final : public Memory {
public:
    struct Dims {
        std::int64_t latent;    // r
        std::int64_t capacity;  // C = floor(B / r); −1 = unbounded
    };
    static Dims size(const MemoryShape& shape, double latent_share);

    LatentCache(const MemoryShape& shape, double beta, double latent_share, Rng& rng);

    void reset() override;
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override { reader_->read(query, out); }
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override;
    std::int64_t state_floats() const override { return static_cast<std::int64_t>(latents_.size()); }
    ConstStateView state() const override { return ConstStateView(latents_.data(), state_floats()); }
    std::int64_t param_floats() const override { return 2 * down_.size(); }

private:
    int d_key_, d_value_;
    Dims dims_;
    RowMat down_;  // W_down: r × (d_k + d_v), orthonormal rows; the up-projection is its transpose
    std::vector<float> latents_;  // the state: one latent a row, in the reader's slot order
    std::int64_t next_ = 0;       // the ring's next slot once full
    // The reconstructed pairs (derived from the latents), a FIFO cache of C pairs whose slots are
    // the latents' rows.
    std::unique_ptr<SoftmaxCache> reader_;
};

}  // namespace memcap
