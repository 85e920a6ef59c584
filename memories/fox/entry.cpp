// memcap/memories/fox/entry.cpp — the Forgetting Transformer's attention (FoxCache).
//
// Stores:       the pairs with their cumulative log decays, rows [k | v | c], up to
//               floor(B / (d_k + d_v + 1)).
// Write:        c_i += log f for every held pair; evict c_i < log τ; when full evict the
//               smallest c_i (the oldest of equals); append (k, v, 0).
// Read:         softmax(β K q + c)ᵀ V (Lin et al. 2025, eq. 5).
// state_floats: pairs × (d_k + d_v + 1).
// Parameters:   beta = 16 (as the softmax cache's; beta=best races 1 … 1024), forget = 1 (f ∈ (0, 1];
//               forget=best races 1, 0.99, 0.97, 0.9, 0.7), threshold = 0 (τ ∈ [0, 1): evict below
//               it; 0 never; threshold=best races 0 and 1e-4). Per token: log_decay = log f_t.
// Source:       Lin, Nikishin, He & Courville 2025, "Forgetting Transformer: Softmax Attention with
//               a Forget Gate" (ICLR).
#include "memories/fox/fox_cache.hpp"
#include "memories/registry.hpp"

namespace memcap {

namespace {

using I = std::int64_t;

MemorySize fox_size(const Spec&, const MemoryShape& s) {
    MemorySize m;
    const I capacity = FoxCache::capacity_at(s), row = I{s.d_key} + s.d_value + 1;
    m.dims = {{"pairs", capacity}};
    m.state_floats = capacity < 0 ? -1 : capacity * row;
    m.floats_per_write = row;
    m.initial_floats = 0;
    m.min_budget = row;  // one pair
    return m;
}

KernelCost fox_cost(const Spec& spec, const MemoryShape& s, Kernel k, I stored, I batch) {
    const MemorySize size = fox_size(spec, s);
    const double row = double(size.floats_per_write), b = double(batch);
    const double held = double(size.state_floats < 0 ? stored : std::min(stored, size.state_floats / size.floats_per_write));
    KernelCost c;
    if (k == Kernel::write_batch) {  // each write decays the held pairs and copies one row
        const double cap = size.state_floats < 0 ? b / 2.0 : double(size.state_floats / size.floats_per_write);
        c.flops = b * (2.0 * std::min(cap, b) + row);
        c.bytes = batch_bytes(s, batch) + kFloat * b * row;
        c.scratch_bytes = 0.0;
    } else {  // logits, softmax, the weighted sum
        c.flops = b * held * (2.0 * s.d_key + 10.0 + 2.0 * s.d_value);
        c.bytes = batch_bytes(s, batch) + kFloat * held * row;
        c.scratch_bytes = kFloat * 2.0 * held;
    }
    return c;
}

}  // namespace

MemoryEntry fox_entry() {
    MemoryEntry e;
    e.name = "fox";
    e.description = "Forgetting Transformer: softmax(beta K q + c) V, c the cumulative log forget gate; evicts c < log threshold";
    e.params = {real_param("beta", "16", "sharpness on raw dot products (as softmax's)", 0.0),
                real_param("forget", "1", "forget gate f per write (1 = none: the cache)", 0.0, true, 1.0),
                real_param("threshold", "0", "evict a pair once its cumulative decay falls below this (0 = never)", 0.0, false, 1.0,
                           true)};
    e.params[0].best = {"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024"};
    e.params[1].best = {"1", "0.99", "0.97", "0.9", "0.7"};
    e.params[2].best = {"0", "0.0001"};
    e.state_formula = "pairs x (d_k + d_v + 1) (each pair and its cumulative decay), pairs <= floor(B / (d_k + d_v + 1)); "
                      "unbounded without a budget";
    e.paper = "Lin et al. 2025 (FoX)";
    e.size = fox_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng&) -> std::unique_ptr<Memory> {
        return std::make_unique<FoxCache>(s, spec.real("beta"), spec.real("forget"), spec.real("threshold"));
    };
    e.cost = fox_cost;
    e.gates.log_decay = true;  // log f_t (FoxCache::write_gated)
    e.cache = true;
    e.order_free = true;  // at the defaults (no forgetting, no budget) it is the unbounded cache
    // How the reports name it (memcap list --json).
    e.published = "Forgetting Transformer";
    e.cost_growth = "O((n·s + q·s)·d), s = min(n, B/(2d + 1)) pairs: every held pair's decay per write";
    e.table_name = "FoX (softmax with a forget gate)";
    e.reduces_to = "softmax";
    e.reduces_when = "forget=1,threshold=0";
    return e;
}

}  // namespace memcap
