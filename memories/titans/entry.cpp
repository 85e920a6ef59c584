// memcap/memories/titans/entry.cpp — the titans backend's table entry (OnlineMlp with momentum).
#include "memories/deep/deep_entry.hpp"
#include "memories/titans/titans.hpp"

namespace memcap {
namespace {
DeepShape titans_shape(const Spec& spec) { return {static_cast<int>(spec.integer("depth")), true}; }
}  // namespace

MemoryEntry titans_entry() {
    MemoryEntry e;
    e.name = "titans";
    e.description = "Titans' memory: an MLP trained at test time with momentum (surprise) and a forgetting gate";
    e.params = deep_params("0.25");
    e.params.push_back(real_param("momentum", "0.5", "surprise decay mu of the momentum S", 0.0, false, 1.0, true));
    e.params.back().best = {"0", "0.5", "0.9"};
    e.params.push_back(real_param("forget", "0", "forgetting gate alpha: M <- (1 - alpha) M + S", 0.0, false, 1.0, true));
    e.params.back().best = {"0", "0.01", "0.1"};
    e.params.push_back(int_param("depth", "2", "layers of the MLP memory", 2, 4));
    e.params.back().best = {"2", "3"};
    e.state_formula = "2 (h d_k + (depth - 2) h^2 + h d_v): weights and momentum, + (b - 1)(d_k + d_v) for a pending mini-batch; h the largest that fits B; 4 d_k without a budget";
    e.paper = "Behrouz, Zhong & Mirrokni 2025 (Titans)";
    e.size = [](const Spec& spec, const MemoryShape& s) { return deep_size(spec, s, titans_shape(spec)); };
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<OnlineMlp>(s, deep_dims(spec, s, titans_shape(spec)), deep_settings(spec), rng);
    };
    e.cost = [](const Spec& spec, const MemoryShape& s, Kernel k, std::int64_t, std::int64_t batch) {
        return deep_cost(spec, s, titans_shape(spec), k, batch);
    };
    e.order_free = false;
    e.backward = false;  // keys=learned would need the gradient through the inner optimisation: refused
    // How the reports name it (memcap list --json).
    e.published = "Titans";
    e.cost_growth = "O(n·B): forward, backward and momentum of a B-parameter MLP per write";
    e.network_layers = 2;  // an MLP of `depth` layers, 2 by default
    return e;
}

}  // namespace memcap
