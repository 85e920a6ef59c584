// memcap/memories/softmax/kv_policy.hpp — what a softmax cache keeps when it is full: its
// policy, one small class per rule behind one interface (CachePolicy).
//
// The cache (softmax_cache.hpp) holds up to C pairs; when a write arrives at a full cache its
// policy chooses the slot the new pair replaces (or drops the new pair). Each policy names its
// paper, what it keeps, and the floats it keeps besides the pairs — every one of them state:
// they sit in the cache's rows, [k | v | the policy's per-pair floats], and in a block before
// the rows (SnapKV's window of queries), so state_floats() and the budget count them. What a
// policy keeps in O(1) counters (a ring's head, the number of writes, a random stream's
// position) is not counted, as FIFO's ring head never was: it says nothing about the pairs.
//
//   policy        entry           keeps                                      state floats
//   FIFO          softmax,        the last C pairs                           C (d_k + d_v)
//                 sliding_window
//   sinks+window  sink_cache      the first s pairs and the last C − s       C (d_k + d_v)
//   H2O           h2o             the last R = floor(r C) pairs and the      C (d_k + d_v + 2)
//                                 C − R with the most accumulated attention
//   TOVA          tova            evicts the pair the last query attended    C (d_k + d_v + 1)
//                                 least
//   SnapKV        snapkv          the last w pairs and the C − w most        w d_k + C (d_k + d_v + 1)
//                                 attended by the last w queries
//   KNorm         knorm           the C pairs of smallest key norm           C (d_k + d_v)
//   random        random_evict    a uniformly drawn held pair evicted        C (d_k + d_v)
//   merging       kv_merge        as H2O, the evicted pair merged into the   C (d_k + d_v + 2)
//                                 held pair of nearest key
//
// C = floor((B − fixed) / (d_k + d_v + per-pair floats)): a policy that keeps more per pair
// holds fewer pairs at the same budget.
//
// What scores the pairs. An attention-scored policy (H2O, TOVA, SnapKV, merging) is told the
// attention weights of every query the cache answers (CachePolicy::observe), the weights the
// read itself used: in the causal form (Memory::causal; token t writes, then reads with q_t)
// these are the queries that arrive while streaming, as H2O and TOVA score a decoder's cache.
// A write that no read follows before the next write — an episode that writes every pair
// before it reads (assoc_recall) — is scored by its own key as the query, as self-attention's
// q_t would score the cache at a token whose read the task does not take: the cache's rule is
// that every written token gets exactly one query, its read's when there is one, else its key.
// The pairs' scores change as the cache is read, so reads change state() (the scores), never
// what a read returns.
#pragma once

#include "core/rng.hpp"
#include "core/types.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace memcap {

/// What a policy sees of the cache: its rows, [k | v | per-pair floats], and the block
/// of floats before them that the policy keeps (fixed_floats).
struct CacheRows {
    float* data = nullptr;     // row r at data + r × stride
    float* fixed = nullptr;    // the policy's block (fixed_floats floats), or null
    std::int64_t stride = 0;   // d_k + d_v + per_pair
    int d_key = 0, d_value = 0;
    std::int64_t stored = 0, capacity = 0;
    std::int64_t ring_head = 0;  // the cache's FIFO ring head: the oldest pair once full
    /// The cache's attention weights of a query (stored floats, slot order).
    std::function<Vec(const float*)> attend;

    float* key(std::int64_t r) const { return data + r * stride; }
    float* value(std::int64_t r) const { return key(r) + d_key; }
    float* extra(std::int64_t r) const { return key(r) + d_key + d_value; }
};

class CachePolicy {
public:
    virtual ~CachePolicy() = default;
    /// Floats it keeps per held pair after its key and value (scores, positions).
    virtual int per_pair() const { return 0; }
    /// Floats it keeps besides the pairs (before the rows in state()).
    virtual std::int64_t fixed_floats() const { return 0; }
    /// True when the pairs sit in a FIFO ring (slot = position mod C): the cache's ages and
    /// write-to-slot map follow its ring head.
    virtual bool ring_order() const { return false; }
    /// True when it needs the attention weights of every query (observe).
    virtual bool observes() const { return false; }
    /// The cache is full and the pair at position `pos` (0-based writes since reset) with key
    /// `key` arrives: the slot it replaces, or −1 to keep the held pairs and drop it.
    virtual std::int64_t victim(const CacheRows& c, const float* key, std::int64_t pos) = 0;
    /// Just before the incoming pair overwrites `slot` (merging folds the pair there into another).
    virtual void evict(const CacheRows& c, std::int64_t slot) { (void)c, (void)slot; }
    /// The pair at position `pos` was written into `slot`: its per-pair floats to set.
    virtual void admit(const CacheRows& c, std::int64_t slot, std::int64_t pos) { (void)c, (void)slot, (void)pos; }
    /// One query's attention weights over the held pairs (slot order).
    virtual void observe(const CacheRows& c, const float* query, const float* weights) {
        (void)c, (void)query, (void)weights;
    }
    /// Back to the state after construction (the cache clears the fixed block to 0 first).
    virtual void reset() {}
};

/// FIFO (sliding-window attention; Beltagy et al. 2020): evicts the oldest pair, the ring's head.
class FifoPolicy final : public CachePolicy {
public:
    bool ring_order() const override { return true; }
    std::int64_t victim(const CacheRows& c, const float*, std::int64_t) override { return c.ring_head; }
};

/// Attention sinks + window (StreamingLLM; Xiao et al. 2024, "Efficient Streaming Language Models
/// with Attention Sinks"): the first s pairs never leave; the other C − s slots are a FIFO ring.
/// s = 0 is FIFO.
class SinkPolicy final : public CachePolicy {
public:
    explicit SinkPolicy(std::int64_t sinks) : sinks_(sinks) {}
    std::int64_t victim(const CacheRows& c, const float*, std::int64_t) override;
    void reset() override { head_ = 0; }

private:
    std::int64_t sinks_, head_ = 0;  // head_: the next window slot to evict, counted from sinks_
};

/// Heavy hitters + recent window (H2O; Zhang et al. 2023, "H2O: Heavy-Hitter Oracle"): each
/// pair's attention accumulated over every query since it was written; the last R =
/// floor(r C) writes (the incoming one included) are kept, and among the others the pair with
/// the least accumulated attention is evicted (ties: the oldest). Per pair: [score, position].
/// r = 1 is FIFO. `merge`: the merging policy below.
class H2OPolicy : public CachePolicy {
public:
    H2OPolicy(double recent_share, std::int64_t capacity);
    int per_pair() const override { return 2; }
    bool observes() const override { return true; }
    std::int64_t victim(const CacheRows& c, const float* key, std::int64_t pos) override;
    void admit(const CacheRows& c, std::int64_t slot, std::int64_t pos) override;
    void observe(const CacheRows& c, const float* query, const float* weights) override;

protected:
    std::int64_t recent_;
};

/// Merging (in the spirit of CaM, Zhang et al. 2024, and D2O, Wan et al. 2024): the pair H2O
/// would evict is not dropped but merged into the held pair whose key is nearest (largest
/// dot product), key and value averaged with weights the attention each received (equal when
/// both received none); the kept pair's score becomes the sum. Per pair: [score, position].
class MergePolicy final : public H2OPolicy {
public:
    using H2OPolicy::H2OPolicy;
    void evict(const CacheRows& c, std::int64_t slot) override;
};

/// Evict the lowest current attention (TOVA; Oren et al. 2024, "Transformers are Multi-State
/// RNNs"): each pair's weight under the last query; the held pair with the least is evicted
/// (ties: the lowest slot). The incoming pair always enters (its own read scores it next).
/// Per pair: [the last query's weight].
class TovaPolicy final : public CachePolicy {
public:
    int per_pair() const override { return 1; }
    bool observes() const override { return true; }
    std::int64_t victim(const CacheRows& c, const float* key, std::int64_t pos) override;
    void admit(const CacheRows& c, std::int64_t slot, std::int64_t pos) override;
    void observe(const CacheRows& c, const float* query, const float* weights) override;
};

/// An observation window of the last queries (SnapKV; Li et al. 2024, "SnapKV: LLM Knows What
/// You are Looking for Before Generation"): the last w queries are kept (w d_k floats); the
/// last w writes are kept, and among the others the pair with the least attention summed over
/// the w kept queries is evicted (ties: the oldest). SnapKV's pooling over neighbouring
/// positions is left out (memcap's pairs have no neighbours in meaning). Per pair: [position].
class SnapKVPolicy final : public CachePolicy {
public:
    SnapKVPolicy(std::int64_t window, int d_key) : window_(window), d_key_(d_key) {}
    int per_pair() const override { return 1; }
    std::int64_t fixed_floats() const override { return window_ * d_key_; }
    bool observes() const override { return true; }
    std::int64_t victim(const CacheRows& c, const float* key, std::int64_t pos) override;
    void admit(const CacheRows& c, std::int64_t slot, std::int64_t pos) override;
    void observe(const CacheRows& c, const float* query, const float* weights) override;
    void reset() override { seen_ = 0; }

private:
    std::int64_t window_;
    int d_key_;
    std::int64_t seen_ = 0;  // queries observed since reset (the window's ring position)
};

/// Key norm (KNorm; Devoto et al. 2024, "A Simple and Effective L2 Norm-Based Strategy for KV
/// Cache Compression", kvpress's KnormPress): keeps the pairs of smallest key norm; the pair of
/// largest norm among the held and the incoming one is not kept (ties: the incoming pair
/// enters and the lowest such slot leaves). On unit-norm keys the norms tie up to rounding.
class KNormPolicy final : public CachePolicy {
public:
    std::int64_t victim(const CacheRows& c, const float* key, std::int64_t pos) override;
};

/// Random eviction (a control): a held pair drawn uniformly is evicted; the incoming pair always
/// enters. Its draws come from the memory's parameter stream (the cell's), so a run is
/// deterministic; reset() restarts the draws.
class RandomPolicy final : public CachePolicy {
public:
    explicit RandomPolicy(Rng rng) : start_(rng), rng_(rng) {}
    std::int64_t victim(const CacheRows& c, const float* key, std::int64_t pos) override;
    void reset() override { rng_ = start_; }

private:
    Rng start_, rng_;
};

}  // namespace memcap
