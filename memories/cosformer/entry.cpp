// memcap/memories/cosformer/entry.cpp — cosFormer (CosFormer, cosformer.hpp).
//
// Stores:       S_c, S_s, d_v × d_φ each; z_c, z_s, d_φ each; the position, 1.
// Write:        S_c += v (φ cos θ_i)ᵀ, S_s += v (φ sin θ_i)ᵀ (and z), φ = relu(P k), θ_i = π i / 2M.
// Read:         Σ_j ψ·φ_j cos(π (i − j)/2M) v_j / Σ_j ψ·φ_j cos(π (i − j)/2M), ψ = relu(P q).
// state_floats: 2 d_v d_φ + 2 d_φ + 1, d_φ = floor((B − 1) / (2 (d_v + 1))); d_k without a budget.
// Parameters:   horizon = 64 (M, the re-weighting's length scale: pairs more than M writes back
//               weigh less than 0, so set it to the stream's length or race it; horizon=best races
//               64, 256, 1024, 4096).
// Source:       Qin, Sun, Deng, Li, Wei, Lv, Yan, Kong & Zhong 2022, "cosFormer: Rethinking
//               Softmax in Attention" (ICLR).
#include "memories/cosformer/cosformer.hpp"
#include "memories/registry.hpp"

#include <algorithm>

namespace memcap {

namespace {

using I = std::int64_t;

MemorySize cosformer_size(const Spec&, const MemoryShape& s) {
    const FeatureMap::Dims phi = FeatureMap::size("proj", s.d_key, std::max<I>(1, CosFormer::feature_budget(s)), 1);
    MemorySize m;
    m.dims = {{"d_phi", phi.dim}};
    m.state_floats = 2 * (I{s.d_value} + 1) * phi.dim + 1;
    m.param_floats = phi.param_floats;
    m.build_scratch_bytes = phi.build_scratch_bytes;
    m.min_budget = 2 * (I{s.d_value} + 1) + 1;  // d_φ = 1
    return m;
}

KernelCost cosformer_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const MemorySize size = cosformer_size(spec, s);
    const double d_phi = double(size.dim("d_phi")), b = double(batch);
    KernelCost c;
    c.flops = b * (2.0 * double(size.param_floats) + 4.0 * s.d_value * d_phi + 6.0 * d_phi);
    c.bytes = batch_bytes(s, batch) +
              kFloat * (double(size.param_floats) + (k == Kernel::write_batch ? 2.0 : 1.0) * double(size.state_floats));
    c.scratch_bytes = kFloat * 2.0 * d_phi;
    return c;
}

}  // namespace

MemoryEntry cosformer_entry() {
    MemoryEntry e;
    e.name = "cosformer";
    e.description = "cosFormer: linear attention over relu features, re-weighted by cos(pi (i - j) / 2M), with its normaliser";
    e.params = {real_param("horizon", "64", "M: the cos re-weighting's length (pairs over M tokens back weigh < 0)", 1.0)};
    e.params[0].best = {"64", "256", "1024", "4096"};
    e.state_formula = "2 d_v x d_phi + 2 d_phi + 1 (the cos and sin grids, their normalisers, the position), "
                      "d_phi = floor((B - 1) / (2 (d_v + 1))); d_k without a budget";
    e.paper = "Qin et al. 2022 (cosFormer)";
    e.size = cosformer_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<CosFormer>(s, spec.real("horizon"), rng);
    };
    e.cost = cosformer_cost;
    // How the reports name it (memcap list --json).
    e.published = "cosFormer";
    e.cost_growth = "O(n·B): the cos and sin grids";
    return e;
}

}  // namespace memcap
