// memcap/memories/softmax/kv_entries.cpp — the softmax cache under each KV-cache policy
// (kv_policy.hpp): one table entry per policy, so each is listed with its paper and its state
// formula, takes only its own settings and is raced over its own candidates.
//
// Every entry reads as the softmax cache reads (softmax(β K q)ᵀ V over the pairs held, β = inf
// the hard argmax); what differs is what it keeps when full, and the floats it keeps besides the
// pairs, which count in its state and so take pairs from the budget. A fixed KV size of T tokens
// (kvpress users' unit) is the budget fixed + T × (d_k + d_v + per-pair floats) floats: the
// entries' state formulas give the map.
#include "core/error.hpp"
#include "memories/registry.hpp"
#include "memories/softmax/softmax_cache.hpp"

#include <algorithm>
#include <cmath>

namespace memcap {
namespace {

using I = std::int64_t;

/// What a policy keeps besides the pairs, at a spec and shape.
struct Keeps {
    int per_pair = 0;  // floats per held pair after its key and value
    I fixed = 0;       // floats besides the pairs
    I min_pairs = 1;   // fewest pairs held
};

using KeepsOf = Keeps (*)(const Spec&, const MemoryShape&);
using PolicyOf = std::unique_ptr<CachePolicy> (*)(const Spec&, const MemoryShape&, I capacity, Rng&);

MemorySize kv_size(const Spec& spec, const MemoryShape& s, KeepsOf keeps) {
    const Keeps k = keeps(spec, s);
    const SoftmaxCache::Dims c = SoftmaxCache::size(s, false, k.per_pair, k.fixed, k.min_pairs);
    MemorySize m;
    m.dims = {{"pairs", c.capacity}};
    m.state_floats = c.capacity < 0 ? -1 : k.fixed + c.capacity * c.row_floats;
    m.floats_per_write = c.row_floats;
    m.initial_floats = k.fixed;
    m.min_budget = c.min_budget;
    return m;
}

// As softmax's (memories/softmax/entry.cpp), plus what the policy does per write: an observing
// policy scores every held pair once a token (≈ 2 d_k + 5 a pair), SnapKV its w queries at each
// eviction, KNorm a key norm a pair.
KernelCost kv_cost(const Spec& spec, const MemoryShape& s, Kernel k, I stored, I batch, KeepsOf keeps, bool observes) {
    const Keeps kp = keeps(spec, s);
    const SoftmaxCache::Dims dims = SoftmaxCache::size(s, false, kp.per_pair, kp.fixed, kp.min_pairs);
    const double m = double(dims.capacity < 0 ? stored + batch : std::min(stored + batch, dims.capacity));
    KernelCost c;
    if (k == Kernel::write_batch) {
        const double score = observes ? double(batch) * m * (2.0 * s.d_key + 5.0) * double(1 + kp.fixed / std::max(1, s.d_key))
                                      : double(batch) * m * 2.0 * s.d_key;
        c.flops = score;
        c.bytes = 2.0 * batch_bytes(s, batch) + kFloat * m * double(dims.row_floats);
        c.scratch_bytes = kFloat * m;
        return c;
    }
    c.flops = double(batch) * m * (2.0 * s.d_key + 5.0 + 2.0 * s.d_value + (observes ? 1.0 : 0.0));
    c.bytes = batch_bytes(s, batch) + kFloat * m * double(dims.row_floats);
    c.scratch_bytes = kFloat * double(batch) * m;
    return c;
}

MemoryEntry kv_entry(std::string name, std::string description, std::string paper, std::string published,
                     std::string formula, std::vector<ParamInfo> own, KeepsOf keeps, PolicyOf policy, bool observes) {
    MemoryEntry e;
    e.name = std::move(name);
    e.description = std::move(description);
    e.params = {real_param("beta", "16", "sharpness on raw dot products, as softmax's (0 = uniform attention; inf = the hard "
                                         "argmax)", 0.0)};
    e.params[0].allow_inf = true;
    e.params[0].best = {"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024", "inf"};
    for (ParamInfo& p : own) e.params.push_back(std::move(p));
    e.state_formula = std::move(formula);
    e.paper = std::move(paper);
    e.size = [keeps](const Spec& spec, const MemoryShape& s) { return kv_size(spec, s, keeps); };
    e.make = [keeps, policy](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        const Keeps k = keeps(spec, s);
        const I capacity = SoftmaxCache::size(s, false, k.per_pair, k.fixed, k.min_pairs).capacity;
        return std::make_unique<SoftmaxCache>(s, spec.real("beta"), std::nullopt, 0.0, policy(spec, s, capacity, rng));
    };
    e.cost = [keeps, observes](const Spec& spec, const MemoryShape& s, Kernel k, I stored, I batch) {
        return kv_cost(spec, s, k, stored, batch, keeps, observes);
    };
    e.published = std::move(published);
    e.cache = true;
    e.order_free = true;  // as softmax: unbounded without a budget, it never evicts, and attention is a sum over pairs
    e.reads_steer_writes = observes;  // an attention-scored policy
    return e;
}

ParamInfo recent_param() {
    ParamInfo p = real_param("recent", "0.5", "share of the pairs held that are the most recent writes (the recent window, "
                                              "R = floor(recent x C)); the rest are kept by score; 1: FIFO", 0.0, false, 1.0);
    p.best = {"0.5", "0", "0.125", "0.25", "0.75", "1"};
    return p;
}

}  // namespace

MemoryEntry sink_cache_entry() {
    ParamInfo sinks = int_param("sinks", "1", "pairs kept from the start of the stream (attention sinks); 0: FIFO", 0, 1 << 20);
    sinks.best = {"1", "0", "2", "4", "8", "16"};
    return kv_entry(
        "sink_cache", "softmax cache keeping the first `sinks` pairs and a FIFO window of the rest (StreamingLLM)",
        "Xiao et al. 2024 (StreamingLLM, attention sinks)", "StreamingLLM",
        "(stored pairs) x (d_k + d_v), at most C = floor(B / (d_k + d_v)) pairs: s sinks and a window of C - s (no score "
        "kept); needs C >= s + 1; a KV size of T tokens is B = T (d_k + d_v)",
        {sinks}, [](const Spec& spec, const MemoryShape&) { return Keeps{0, 0, spec.integer("sinks") + 1}; },
        [](const Spec& spec, const MemoryShape&, I, Rng&) -> std::unique_ptr<CachePolicy> {
            return std::make_unique<SinkPolicy>(spec.integer("sinks"));
        },
        false);
}

MemoryEntry h2o_entry() {
    return kv_entry(
        "h2o", "softmax cache keeping a recent window and the heavy hitters by accumulated attention (H2O)",
        "Zhang et al. 2023 (H2O: Heavy-Hitter Oracle)", "H2O",
        "(stored pairs) x (d_k + d_v + 2): each pair's accumulated attention and position beside it; at most C = "
        "floor(B / (d_k + d_v + 2)) pairs; a KV size of T tokens is B = T (d_k + d_v + 2)",
        {recent_param()}, [](const Spec&, const MemoryShape&) { return Keeps{2, 0, 1}; },
        [](const Spec& spec, const MemoryShape&, I capacity, Rng&) -> std::unique_ptr<CachePolicy> {
            return std::make_unique<H2OPolicy>(spec.real("recent"), capacity);
        },
        true);
}

MemoryEntry tova_entry() {
    return kv_entry(
        "tova", "softmax cache evicting the pair the last query attended to least (TOVA)",
        "Oren et al. 2024 (TOVA: Transformers are Multi-State RNNs)", "TOVA",
        "(stored pairs) x (d_k + d_v + 1): each pair's weight under the last query beside it; at most C = "
        "floor(B / (d_k + d_v + 1)) pairs; a KV size of T tokens is B = T (d_k + d_v + 1)",
        {}, [](const Spec&, const MemoryShape&) { return Keeps{1, 0, 1}; },
        [](const Spec&, const MemoryShape&, I, Rng&) -> std::unique_ptr<CachePolicy> { return std::make_unique<TovaPolicy>(); },
        true);
}

MemoryEntry snapkv_entry() {
    ParamInfo window = int_param("window", "1", "the observation window: the last w queries kept, whose attention scores "
                                                "the pairs, and the last w writes never evicted", 1, 1 << 20);
    window.best = {"1", "2", "4", "8", "16", "32"};
    return kv_entry(
        "snapkv", "softmax cache scoring pairs by an observation window of the last queries (SnapKV)",
        "Li et al. 2024 (SnapKV)", "SnapKV",
        "w x d_k (the window's queries) + (stored pairs) x (d_k + d_v + 1) (each pair's position); at most C = "
        "floor((B - w d_k) / (d_k + d_v + 1)) pairs; needs C >= w; a KV size of T tokens is B = w d_k + T (d_k + d_v + 1)",
        {window},
        [](const Spec& spec, const MemoryShape& s) {
            const I w = spec.integer("window");
            return Keeps{1, w * s.d_key, w};
        },
        [](const Spec& spec, const MemoryShape& s, I, Rng&) -> std::unique_ptr<CachePolicy> {
            return std::make_unique<SnapKVPolicy>(spec.integer("window"), s.d_key);
        },
        true);
}

MemoryEntry knorm_entry() {
    return kv_entry(
        "knorm", "softmax cache keeping the pairs of smallest key norm (KNorm)",
        "Devoto et al. 2024 (an L2-norm strategy for KV cache compression; kvpress KnormPress)", "KNorm",
        "(stored pairs) x (d_k + d_v), at most C = floor(B / (d_k + d_v)) pairs (the norms are recomputed from the keys: "
        "no score kept); a KV size of T tokens is B = T (d_k + d_v)",
        {}, [](const Spec&, const MemoryShape&) { return Keeps{0, 0, 1}; },
        [](const Spec&, const MemoryShape&, I, Rng&) -> std::unique_ptr<CachePolicy> { return std::make_unique<KNormPolicy>(); },
        false);
}

MemoryEntry random_evict_entry() {
    return kv_entry(
        "random_evict", "softmax cache evicting a uniformly drawn pair (a control)", "a control (kvpress RandomPress)",
        "random eviction",
        "(stored pairs) x (d_k + d_v), at most C = floor(B / (d_k + d_v)) pairs (the draws come from the cell's stream: "
        "no state); a KV size of T tokens is B = T (d_k + d_v)",
        {}, [](const Spec&, const MemoryShape&) { return Keeps{0, 0, 1}; },
        [](const Spec&, const MemoryShape&, I, Rng& rng) -> std::unique_ptr<CachePolicy> {
            return std::make_unique<RandomPolicy>(Rng::stream("random_evict draws", rng.key()));
        },
        false);
}

MemoryEntry kv_merge_entry() {
    return kv_entry(
        "kv_merge", "softmax cache merging the pair H2O would evict into the held pair of nearest key, by attention received",
        "Zhang et al. 2024 (CaM: cache merging); Wan et al. 2024 (D2O)", "KV merging",
        "(stored pairs) x (d_k + d_v + 2): each pair's accumulated attention and position beside it; at most C = "
        "floor(B / (d_k + d_v + 2)) pairs; a KV size of T tokens is B = T (d_k + d_v + 2)",
        {recent_param()}, [](const Spec&, const MemoryShape&) { return Keeps{2, 0, 1}; },
        [](const Spec& spec, const MemoryShape&, I capacity, Rng&) -> std::unique_ptr<CachePolicy> {
            return std::make_unique<MergePolicy>(spec.real("recent"), capacity);
        },
        true);
}

}  // namespace memcap
