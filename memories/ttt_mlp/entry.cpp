// memcap/memories/ttt_mlp/entry.cpp — the ttt_mlp backend's table entry (OnlineMlp at depth 2).
#include "memories/deep/deep_entry.hpp"
#include "memories/ttt_mlp/ttt_mlp.hpp"

namespace memcap {
namespace {
constexpr DeepShape kTttMlp{2, false};
}

MemoryEntry ttt_mlp_entry() {
    MemoryEntry e;
    e.name = "ttt_mlp";
    e.description = "TTT-MLP: a two-layer GELU MLP trained at test time by mini-batch gradient steps on |f(k) - v|^2";
    e.params = deep_params("0.25");
    e.state_formula = "h (d_k + d_v) + (b - 1)(d_k + d_v) for a pending mini-batch, h the largest that fits B; 4 d_k without a budget";
    e.paper = "Sun et al. 2024 (TTT-MLP)";
    e.size = [](const Spec& spec, const MemoryShape& s) { return deep_size(spec, s, kTttMlp); };
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<OnlineMlp>(s, deep_dims(spec, s, kTttMlp), deep_settings(spec), rng);
    };
    e.cost = [](const Spec& spec, const MemoryShape& s, Kernel k, std::int64_t, std::int64_t batch) {
        return deep_cost(spec, s, kTttMlp, k, batch);
    };
    e.order_free = false;
    e.backward = false;  // keys=learned would need the gradient through the inner optimisation: refused
    // How the reports name it (memcap list --json).
    e.published = "TTT-MLP";
    e.cost_growth = "O(n·B): forward and backward of a B-parameter MLP per write";
    e.network_layers = 2;  // a two-layer MLP
    return e;
}

}  // namespace memcap
