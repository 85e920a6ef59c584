// memcap/memories/softmax/softmax_cache.hpp — softmax attention over a FIFO key–value cache.
//
// Stores:       the written (key, value) pairs, up to C = floor(B / (d_k + d_v))
//               of them; when full, the oldest pair is evicted (FIFO). Without a
//               budget the cache is unbounded and never evicts.
//               What it keeps when full is its policy (kv_policy.hpp, CachePolicy):
//               FIFO by default (`softmax`, `sliding_window`, bit for bit as it always
//               was); the KV-cache policies (`sink_cache`, `h2o`, `tova`, `snapkv`,
//               `knorm`, `random_evict`, `kv_merge`) keep other pairs, and the floats
//               they keep beside each pair (scores, positions) sit in its row,
//               [k | v | policy floats], so C = floor((B − fixed) / row) counts them.
// Write:        append (k, v).
// Read:         softmax(β · K q − slope · age)ᵀ V — β multiplies the raw dot
//               products (no 1/√d); β = 0 is uniform attention over the stored pairs.
//               The recency bias (ALiBi, Press et al. 2022): a pair's age is the
//               number of pairs written after it that the cache holds (0 = newest);
//               slope = 0 (the default) is no bias, the plain cache bit for bit. A
//               slope > 0 makes the later of two copies of one key win.
//               β = ∞ (beta=inf) is the hard limit, computed exactly: the read is the
//               value of the key with the largest dot product (scores summed in
//               double in one fixed order, so equal keys score the same bits); keys
//               tied at it share the weight as the limit does — equally at slope 0,
//               by softmax(−slope · age) otherwise. It never overflows or reads NaN.
//               Its gradient (backward) is 0: the read is piecewise constant.
// Backward:     the episode's (backward: keys and queries) and the causal form's
//               (causal_backward: queries, keys and values; with the recency bias and the
//               null slot, whose constants are not differentiated).
//               With a structural mask (ReadOptions::hidden, the control
//               assoc_recall:control=structural_mask) one written pair per
//               query gets weight exactly 0.
//               With a null slot (null = s): one more slot with the constant
//               logit s (against β · k·q) and a zero value, so weight flows to it
//               when no key matches and the read shrinks towards 0:
//               read = Σ_i e^{β k_i·q} v_i / (e^s + Σ_i e^{β k_i·q}).
// state_floats: (number of stored pairs) × (d_k + d_v) ≤ B; with a null slot one row
//               more (its logit and zero value take a pair's row: C = floor(B / (d_k + d_v)) − 1).
//               The recency bias costs no state: the rows sit in a FIFO ring in write
//               order, so a slot's age is its distance behind the ring's head (the
//               next slot to write, one integer every FIFO cache keeps, as a sliding
//               window knows its relative positions): no position is stored per pair.
// Parameters:   beta = 16 (real ≥ 0, or inf); null = none (a finite real: the null slot's
//               logit); slope = 0 (real ≥ 0: the recency bias per write of age).
//               Minimum budget: d_k + d_v (one pair), two rows with a null slot.
// Source:       Bahdanau, Cho & Bengio 2014; Vaswani et al. 2017 ("Attention
//               Is All You Need"); as a memory, Ramsauer et al. 2020; the recency
//               bias: Press, Smith & Lewis 2022 (ALiBi).
//
// State layout: row r of the cache is [k | v] (d_k + d_v floats); rows are
// kept in a ring, so state() is the stored rows in slot order, not write order.
// With a null slot, state() begins with its row: [s, 0, …, 0 | 0, …, 0].
#pragma once

#include "memories/memory.hpp"
#include "memories/softmax/kv_policy.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace memcap {

class SoftmaxCache final : public Memory {
public:
    /// The cache's dimensions at a shape: its one sizing function, used by the
    /// constructor, the table's cost model and minimum budget, and `memcap list`.
    struct Dims {
        std::int64_t capacity;    // pairs held at most, floor((B − fixed) / row_floats); −1 = unbounded (no budget)
        std::int64_t row_floats;  // d_k + d_v (+ the policy's per-pair floats): floats per stored pair
        std::int64_t min_budget;  // one pair (a policy's fewest pairs, and its fixed floats)
    };
    /// A policy (kv_policy.hpp) keeping `per_pair` floats beside each pair, `fixed` floats besides
    /// the pairs, and needing `min_pairs` pairs held.
    static Dims size(const MemoryShape& shape, bool null_slot = false, int per_pair = 0, std::int64_t fixed = 0,
                     std::int64_t min_pairs = 1);

    /// `null_logit`: the null slot's constant logit; empty: no null slot.
    /// `slope`: the recency bias, −slope·age added to each pair's logit (0: none).
    /// `policy`: what it keeps when full (kv_policy.hpp); null: FIFO. A policy whose pairs do not
    /// sit in a FIFO ring takes neither a null slot nor a recency bias (std::invalid_argument).
    SoftmaxCache(const MemoryShape& shape, double beta, std::optional<double> null_logit = std::nullopt, double slope = 0.0,
                 std::unique_ptr<CachePolicy> policy = nullptr);

    void reset() override;
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return head_ + stored_ * row_floats(); }
    ConstStateView state() const override { return ConstStateView(buf_.data(), state_floats()); }

    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    /// With options.hidden (one write index per query), the hidden pair gets score −∞
    /// and weight exactly 0 (as `weights` with a mask); a read left with no pair to
    /// attend to is the zero vector.
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override;

    /// p = softmax(β K q) per query, r = Σ p_j v_j: ∂p = ∂r Vᵀ, ∂s = β p ⊙ (∂p − (p·∂p)),
    /// ∂q = ∂s K, ∂k_j = Σ_i ∂s_ij q_i — for the pairs still held (an evicted key has
    /// no gradient). The weights come from the same function the read uses.
    void backward(ConstMatRef keys, ConstMatRef values, ConstMatRef queries, ConstMatRef d_reads, MatRef d_keys,
                  MatRef d_queries) const override;

    /// The causal form's backward (Memory::causal_backward; no gate inputs: it takes none). It
    /// runs causal() from reset (write at t, then read with q_t: the cache holds tokens
    /// max(0, t − C + 1)..t), then writes the tokens again and, at each t, takes the weights
    /// p_t the read used (weights(), slot order; the recency bias and the null slot in them) over
    /// the held tokens s: ∂v_s += p_ts ∂o_t, ∂p_ts = ∂o_t · v_s, ∂ℓ_ts = p_ts (∂p_ts − Σ_s' p_ts' ∂p_ts')
    /// (the null slot's value is 0: no ∂p of its own), ∂q_t = β Σ_s ∂ℓ_ts k_s, ∂k_s += β ∂ℓ_ts q_t.
    /// At β = ∞ the weights are piecewise constant in the keys and queries: their gradient is 0,
    /// the values' is as above.
    void causal_backward(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates,
                         ConstMatRef d_out, CausalGrads& grads) override;

    /// Attention weights of `query` over the stored pairs (slot order), summing to 1 (to 1
    /// minus the null slot's weight when there is one).
    /// `allowed` (one flag per stored pair) is a structural mask: a masked pair gets
    /// score −∞ and weight exactly 0. At least one pair must be allowed.
    Vec weights(ConstVecRef query, const std::vector<char>* allowed = nullptr) const;

    /// Slot (row of the state) holding the pair written `write`-th since reset; −1 when
    /// that pair was evicted or never written. FIFO only (a ring-ordered policy; std::logic_error otherwise).
    std::int64_t slot_of(std::int64_t write) const;

    std::int64_t stored() const { return stored_; }
    /// Age of the pair in `slot`: 0 for the newest write, stored() − 1 for the oldest held.
    float age(std::int64_t slot) const;

private:
    std::int64_t row_floats() const { return d_key_ + d_value_ + per_pair_; }
    /// The policy's view of the rows (its per-pair floats and fixed block writable).
    CacheRows view() const;
    /// Tells an observing policy one query's weights (a read's, or a key's as its own query).
    void observe(const float* query, const float* weights) const;
    using CacheMap = Eigen::Map<const RowMat>;
    CacheMap rows() const { return CacheMap(buf_.data() + head_, stored_, row_floats()); }
    /// buf_ holding only the null slot's row (or nothing).
    void clear_rows();
    // read_batch; `hidden` is null for a plain read, else one hidden write per query.
    void read_rows(ConstMatRef queries, const IndexView* hidden, MatRef out) const;
    // The read's weights (m × stored): softmax of β × the raw scores, `hidden` as in read_rows.
    void attention(ConstMatRef queries, const IndexView* hidden, RowMat& p) const;
    // β = ∞: one query's weights (stored_ floats at `out`) over the pairs `allowed` (null: all)
    // but `hidden_slot` (−1: none), from exact scores: see the header.
    void hard_weights(const float* query, const std::vector<char>* allowed, std::int64_t hidden_slot, float* out) const;
    // The same from the query's exact scores (stored_ doubles), taken for many queries at once by attention.
    void hard_weights(const double* score, const std::vector<char>* allowed, std::int64_t hidden_slot, float* out) const;

    int d_key_, d_value_;
    float beta_;
    bool hard_;     // β = ∞
    float slope_;   // the recency bias per write of age
    /// std::logic_error unless the policy is FIFO (the backward passes differentiate FIFO only).
    void require_fifo_for_backward() const;
    std::unique_ptr<CachePolicy> policy_;  // never null (FIFO by default)
    int per_pair_ = 0;                     // policy_->per_pair()
    bool observes_ = false;                // policy_->observes()
    std::optional<float> null_;  // the null slot's logit; empty: none
    std::int64_t head_;          // floats before the first pair's row: the null slot's row, or 0
    std::int64_t capacity_;      // −1: unbounded
    std::int64_t stored_ = 0;    // pairs held
    std::int64_t next_slot_ = 0; // ring position of the next write once full (= the oldest pair)
    std::int64_t written_ = 0;   // pairs written since reset
    // Rows appended are written at once: not zeroed first. Mutable: an observing policy's scores
    // (per-pair floats in the rows, its fixed block) change as the cache is read.
    mutable std::vector<float, DefaultInitAllocator<float>> buf_;
    mutable bool pending_ = false;         // the last write has had no read yet: its key is its query
    std::int64_t last_slot_ = -1;          // where the last write went (−1: dropped)
    // The attention weights of a plain read, with the keys and queries they came from:
    // a read with bit-identical keys and queries (a position-keyed task reads the same
    // positions in every episode) reuses them. Kept, up to kMemoWeights floats, when a
    // read's print (shape and corner entries of its queries and keys) equals the last one's.
    static constexpr std::int64_t kMemoWeights = std::int64_t{1} << 18;
    std::uint64_t fingerprint(ConstMatRef queries, const CacheMap& cache) const;
    mutable RowMat memo_keys_, memo_queries_, memo_weights_;
    mutable std::int64_t memo_next_slot_ = 0;  // the ring's head the memo's ages came from
    mutable std::uint64_t last_print_ = 0;
};

}  // namespace memcap
