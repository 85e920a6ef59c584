// memcap/memories/deep/deep_entry.hpp — what the entries of the memories trained at test time
// (ttt_linear, ttt_mlp, titans) share: their sizing function, cost model and parameters, from
// OnlineMlp.
#pragma once

#include "memories/deep/online_mlp.hpp"
#include "memories/registry.hpp"

namespace memcap {

/// How an entry reads its network's shape and settings from its spec.
struct DeepShape {
    int depth = 2;          // layers (TTT-Linear: 1; TTT-MLP: 2; Titans: its `depth`)
    bool momentum = false;  // a momentum buffer in the state (Titans)
};

/// OnlineMlp::size for the entry's shape.
OnlineMlp::Dims deep_dims(const Spec& spec, const MemoryShape& s, const DeepShape& shape);
/// The sizing function as a MemorySize: dims {"d_phi", d_φ} at depth 1, else {"hidden", h},
/// {"depth", L}; then {"pending", b − 1} when b > 1. State = weights (+ momentum) + the pending
/// pairs; parameters = the drawn initial weights (none at depth 1) and φ's projection.
MemorySize deep_size(const Spec& spec, const MemoryShape& s, const DeepShape& shape);
/// FLOPs of a write (OnlineMlp::Dims::write_flops per pair and step) and of a read (a forward
/// pass per query), bytes of the state and the batch, the activations as temporaries. Not
/// counted: a read while pairs are pending applies them to a copy of the state first (up to
/// b − 1 pairs' write FLOPs, once per read call).
KernelCost deep_cost(const Spec& spec, const MemoryShape& s, const DeepShape& shape, Kernel k, std::int64_t batch);
/// The settings in `spec`: lr, steps, batch, and momentum and forget when it has them.
OnlineMlp::Settings deep_settings(const Spec& spec);
/// The inner learning rate (in (0, 1]), mini-batch size (1–1024) and steps per batch (1–64)
/// every memory trained at test time takes.
std::vector<ParamInfo> deep_params(const std::string& default_lr);

}  // namespace memcap
