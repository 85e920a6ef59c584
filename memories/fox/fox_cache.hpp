// memcap/memories/fox/fox_cache.hpp — the Forgetting Transformer (FoX): softmax attention over
// a key–value cache with a forget gate added to the logits, and eviction by cumulative decay.
//
// Stores:       the written pairs with each one's cumulative log decay c_i, as rows
//               [k | v | c] (d_k + d_v + 1 floats), up to C = floor(B / (d_k + d_v + 1)) of them;
//               unbounded without a budget.
// Write:        token t with forget gate f_t ∈ (0, 1]: every held pair's c_i += log f_t; then
//               the pairs with c_i < log τ are evicted (τ the threshold; τ = 0 never evicts);
//               when the cache is still full, the pair with the smallest c_i (ties: the
//               oldest) is evicted; then (k, v) is appended with c = 0.
// Read:         softmax(β K q + c)ᵀ V — Lin, Nikishin, He & Courville 2025, eq. 5: o_i =
//               Σ_j exp(q_iᵀk_j + D_ij) v_j / Σ_j exp(q_iᵀk_j + D_ij), D_ij = Σ_{l=j+1}^{i} log f_l
//               (c_j is D_ij for the current token i; β multiplies the raw dot products, as
//               the softmax cache's). 0 when nothing is held.
//               A constant gate f is the softmax cache's recency bias (ALiBi) with slope
//               −log f (a test); f = 1 and τ = 0 without a budget is the plain cache.
// state_floats: pairs held × (d_k + d_v + 1) ≤ B.
// Eviction:     the paper's FoX keeps every pair (its KV-cache pruning drops those whose decay
//               makes them negligible); under a budget the rule here drops first what the
//               gate has forgotten, so with data-dependent gates it keeps what FIFO would not.
#pragma once

#include "memories/memory.hpp"

#include <vector>

namespace memcap {

class FoxCache final : public Memory {
public:
    /// Pairs held at most: floor(B / (d_k + d_v + 1)); −1 without a budget.
    static std::int64_t capacity_at(const MemoryShape& shape) {
        return shape.budget_floats ? *shape.budget_floats / (shape.d_key + shape.d_value + 1) : -1;
    }
    FoxCache(const MemoryShape& shape, double beta, double forget, double threshold);

    void reset() override { rows_.clear(); }
    void write(ConstVecRef key, ConstVecRef value) override { append(key, value, log_f_); }
    void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return static_cast<std::int64_t>(rows_.size()); }
    ConstStateView state() const override { return ConstStateView(rows_.data(), static_cast<Eigen::Index>(rows_.size())); }
    StateRef mutable_state() override { return StateRef(rows_.data(), static_cast<Eigen::Index>(rows_.size())); }

    std::int64_t pairs() const { return static_cast<std::int64_t>(rows_.size()) / row_; }

private:
    void append(ConstVecRef key, ConstVecRef value, float log_f);

    int d_k_, d_v_, row_;
    std::int64_t capacity_;
    float beta_, log_f_, log_tau_;
    std::vector<float> rows_;  // [k | v | c] per pair, in write order
};

}  // namespace memcap
