// memcap/memories/deep/deep_entry.hpp — what the entries of the online-network memories
// (ttt_mlp, titans) share: their sizing function, cost model and factory, from OnlineMlp.
#pragma once

#include "memories/deep/online_mlp.hpp"
#include "memories/registry.hpp"

namespace memcap {

/// How an entry reads its network's shape and settings from its spec.
struct DeepShape {
    int depth = 2;          // layers (TTT-MLP: 2; Titans: its `depth`)
    bool momentum = false;  // a momentum buffer in the state (Titans)
};

/// OnlineMlp::size for the entry's shape.
OnlineMlp::Dims deep_dims(const Spec& spec, const MemoryShape& s, const DeepShape& shape);
/// The sizing function as a MemorySize: dims {"hidden", h}, {"depth", L}; state = weights
/// (+ momentum); parameters = the initial weights.
MemorySize deep_size(const Spec& spec, const MemoryShape& s, const DeepShape& shape);
/// FLOPs of a write (OnlineMlp::Dims::write_flops per pair and step) and of a read (a forward
/// pass per query), bytes of the state and the batch, the activations as temporaries.
KernelCost deep_cost(const Spec& spec, const MemoryShape& s, const DeepShape& shape, Kernel k, std::int64_t batch);
/// The settings in `spec`: lr, steps, batch, and momentum and forget when it has them.
OnlineMlp::Settings deep_settings(const Spec& spec);
/// The inner learning rate, steps per batch and mini-batch size every online network takes.
std::vector<ParamInfo> deep_params(const std::string& default_lr);

}  // namespace memcap
