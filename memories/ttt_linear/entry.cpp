// memcap/memories/ttt_linear/entry.cpp — the ttt_linear backend's table entry (OnlineMlp at depth 1).
#include "memories/deep/deep_entry.hpp"
#include "memories/ttt_linear/ttt_linear.hpp"

namespace memcap {
namespace {
constexpr DeepShape kTttLinear{1, false};
}

MemoryEntry ttt_linear_entry() {
    MemoryEntry e;
    e.name = "ttt_linear";
    e.description = "TTT-Linear: a linear map trained at test time by mini-batch gradient steps on |W phi(k) - v|^2";
    e.params = deep_params("0.5");
    e.params[0] = real_param("lr", "0.5", "inner learning rate eta (b = 1, one step: the delta rule at beta = 2 eta)", 0.0,
                             true, 1.0);
    e.params[0].best = {"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "0.75"};  // delta's beta list / 2
    e.state_formula = "d_v x d_phi as linear (d_phi = floor(B / d_v)), plus (b - 1)(d_k + d_v) for a pending mini-batch";
    e.paper = "Sun et al. 2024 (TTT-Linear)";
    e.size = [](const Spec& spec, const MemoryShape& s) { return deep_size(spec, s, kTttLinear); };
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<OnlineMlp>(s, deep_dims(spec, s, kTttLinear), deep_settings(spec), rng);
    };
    e.cost = [](const Spec& spec, const MemoryShape& s, Kernel k, std::int64_t, std::int64_t batch) {
        return deep_cost(spec, s, kTttLinear, k, batch);
    };
    e.order_free = false;  // each step is taken at the weights the last one left
    e.backward = false;    // keys=learned would need the gradient through the inner optimisation: refused
    // How the reports name it (memcap list --json).
    e.published = "TTT-Linear";
    e.cost_growth = "O(n·B): one gradient step on a B-float weight per write";
    e.network_layers = 1;  // its state: one linear map, trained as it writes
    return e;
}

}  // namespace memcap
