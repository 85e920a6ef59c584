// memcap/memories/softmax/entry.cpp — the softmax backend's table entry (SoftmaxCache).
#include "memories/softmax/softmax_cache.hpp"
#include "memories/registry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memcap {
namespace {

using I = std::int64_t;

MemorySize softmax_size(const Spec& spec, const MemoryShape& s) {
    const bool null_slot = spec.has("null");
    const SoftmaxCache::Dims c = SoftmaxCache::size(s, null_slot);
    MemorySize m;
    m.dims = {{"pairs", c.capacity}};
    m.state_floats = c.capacity < 0 ? -1 : (c.capacity + (null_slot ? 1 : 0)) * c.row_floats;
    m.floats_per_write = c.row_floats;
    m.initial_floats = null_slot ? c.row_floats : 0;  // the null slot's row
    m.min_budget = c.min_budget;
    return m;
}

KernelCost softmax_cost(const Spec& spec, const MemoryShape& s, Kernel k, I stored, I batch) {
    const I capacity = SoftmaxCache::size(s, spec.has("null")).capacity;
    KernelCost c;
    if (k == Kernel::write_batch) {  // copies: the pairs in, the same floats into the cache
        c.bytes = 2.0 * batch_bytes(s, batch);
        return c;
    }
    const double m = double(capacity < 0 ? stored : std::min(stored, capacity));
    // scores K q (2 d_k), max, subtract-scale, exp, sum, divide (≈ 5), weighted sum of V (2 d_v)
    c.flops = double(batch) * m * (2.0 * s.d_key + 5.0 + 2.0 * s.d_value);
    c.bytes = batch_bytes(s, batch) + kFloat * m * (s.d_key + s.d_value);
    c.scratch_bytes = kFloat * double(batch) * m;  // the batch × stored score matrix
    return c;
}

// The cache without eviction is the crosstalk model's cache (memories/theory/crosstalk.hpp)
// at the spec's β; a null slot moves no comparison (its value is zero), only the capacity.
std::optional<theory::RecallModel> softmax_recall(const Spec& spec, const MemorySize& size, const MemoryShape&,
                                                  const theory::RecallTask& t) {
    if (auto m = theory::keyset_not_modelled(t, "cache_recall", false)) return m;
    theory::RecallModel m;
    m.model = "cache_recall";
    const std::int64_t capacity = size.dim("pairs");
    m.sizes = {{"pairs", capacity}};
    const std::int64_t pairs = capacity < 0 ? t.n : capacity;  // unbounded without a budget
    if (t.d < 4) {
        m.note = "d < 4";
    } else if (std::isinf(spec.real("beta"))) {
        m.note = "beta=inf: the hard argmax is not modelled";
    } else if (spec.has("slope")) {
        m.note = "slope > 0: the recency bias is not modelled";
    } else if (t.n > pairs) {
        m.note = "evicting: holds " + std::to_string(pairs) + " of " + std::to_string(t.n) + " pairs";
    } else {
        m.applies = "exact", m.call = theory::cache_call(t.n, t.d, spec.real("beta"), t.noise_sigma);
    }
    return m;
}

// With a budget the cache holds the last `pairs` writes (FIFO): the sliding window's horizon
// (memories/theory/forgetting.hpp). Without one it never evicts, and has no horizon.
std::optional<theory::RecallModel> softmax_horizon(const Spec&, const MemorySize& size, const MemoryShape& shape,
                                                   const theory::LagBucket& b) {
    if (!shape.budget_floats) return std::nullopt;
    return theory::window_model(size.dim("pairs"), b);
}

}  // namespace

MemoryEntry softmax_entry() {
    MemoryEntry e;
    e.name = "softmax";
    e.description = "softmax attention over a FIFO key-value cache";
    e.params = {real_param("beta", "16", "sharpness on raw dot products (0 = uniform attention; inf = the hard argmax: "
                                         "the value of the nearest key, exactly)", 0.0)};
    e.params[0].allow_inf = true;
    // softmax:beta=best: the scale that suits the width and the noise, in factors of 2 from a
    // soft average (1) to a sharp one (1024), and the hard argmax itself (inf), which a finite
    // β only approaches (over narrow codes in float32 it may need far more than 1024)
    e.params[0].best = {"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024", "inf"};
    e.params.push_back(optional_param(real_param(
        "null", "", "a null slot: constant logit s (against beta k.q) with a zero value, taking one pair's row; none: no slot",
        -std::numeric_limits<double>::infinity())));
    e.params[1].best = {"0", "2", "4", "6", "8", "10", "12", "14", "16"};  // softmax:null=best
    // The recency bias (ALiBi): −slope·age on each logit, age = writes held after the pair.
    // Optional with 0 meaning left out, so every spec without it keeps its canonical form.
    e.params.push_back(optional_param(real_param(
        "slope", "", "recency bias (ALiBi): -slope x age added to each logit, age = pairs held written after it; no state: "
                  "ages follow the FIFO ring's order; 0: none", 0.0)));
    e.params[2].same_as_none = "0";
    e.params[2].best = {"0", "0.001", "0.01", "0.1", "1", "10"};  // softmax:slope=best: 0 first, so a tie keeps the plain cache
    e.state_formula = "(stored pairs) x (d_k + d_v), at most floor(B / (d_k + d_v)) pairs (one fewer with a null slot, "
                      "whose row counts); unbounded without a budget";
    e.splits_into_heads = true;  // heads=h (memories/heads.hpp)
    e.paper = "Bahdanau et al. 2014; Vaswani et al. 2017";
    // zoology/mixers/attention.py, MHA.state_size: 2 * d_model * sequence_length (the key-value cache)
    e.zoology = ZoologyCount{"2 x d_model x sequence_length (zoology/mixers/attention.py); d_model = d_k = d_v, sequence_length = "
                             "the pairs held: equal to memcap's without a null slot (whose row memcap counts); unbounded without a budget",
                             [](const MemorySize& size, const MemoryShape& s) {
                                 const std::int64_t pairs = size.dim("pairs");
                                 return pairs < 0 ? std::int64_t{-1} : 2 * std::int64_t{s.d_key} * pairs;
                             }};
    e.size = softmax_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng&) -> std::unique_ptr<Memory> {
        return std::make_unique<SoftmaxCache>(s, spec.real("beta"),
                                              spec.has("null") ? std::optional<double>(spec.real("null")) : std::nullopt,
                                              spec.has("slope") ? spec.real("slope") : 0.0);
    };
    e.cost = softmax_cost;  // also decides the width race: ties go to the cheapest, dominated candidates are pruned
    e.order_free = true;      // unbounded without a budget and at slope 0: never evicts, and attention is a sum over pairs
    e.can_hide_pairs = true;  // one row per pair: a read can give one of them weight 0
    e.backward = true;        // SoftmaxCache::backward
    e.causal_backward = true; // SoftmaxCache::causal_backward
    e.layer.norm = false;     // trained frame: attention has no output norm
    e.recall_model = softmax_recall;
    e.horizon_model = softmax_horizon;
    // How the reports name it (memcap list --json).
    e.published = "softmax attention";
    e.cost_growth = "O((n + q·s)·d), s = min(n, B/2d) slots: flat in B once every pair fits";
    e.table_name = "softmax cache = sliding-window attention";
    e.plain_name = "softmax cache";
    e.same_as = "sliding_window";
    e.article = true;
    e.cache = true;
    return e;
}

}  // namespace memcap
