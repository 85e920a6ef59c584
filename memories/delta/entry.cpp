// memcap/memories/delta/entry.cpp — the delta backend's table entry (DeltaGrid).
#include "memories/delta/delta_grid.hpp"
#include "memories/grid/grid_entry.hpp"

namespace memcap {
namespace {

using I = std::int64_t;

KernelCost delta_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const double d_phi = grid_dims(spec, s).phi.dim;
    // normalising φ: 2 d_phi + 1 (+ sqrt, divide); a write also does err = v − M φ (2 d_v d_phi + d_v)
    // and M += (β err) φᵀ (2 d_v d_phi + d_v): a rank-1 update chain, two passes over M per item.
    const double extra = 3.0 * d_phi + 2.0 + (k == Kernel::write_batch ? 2.0 * s.d_value * d_phi + 2.0 * s.d_value : 0.0);
    return grid_cost(spec, s, k, batch, extra);
}

}  // namespace

MemoryEntry delta_entry() {
    MemoryEntry e;
    e.name = "delta";
    e.description = "delta-rule outer-product grid (fast weights that edit)";
    e.params = {real_param("beta", "1", "write strength beta_w", 0.0, true, 2.0), grid_phi_param(), grid_nu_param()};
    // delta:beta=best. In 1-2-5 steps down to 0.01: on one pass over random keys the best
    // step falls as n grows past d_phi (about 0.05 at n = 3 d_phi), and beta -> 0 is the
    // linear grid (up to scale, which the nearest-value read ignores); 1 and 1.5 are for
    // few pairs, where overwriting what a key already reads pays.
    e.params[0].best = {"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "1.5"};
    e.state_formula = "d_v x d_phi, as linear";
    e.gates.beta = true;  // a step per token (DeltaGrid::write_gated)
    e.splits_into_heads = true;  // heads=h (memories/heads.hpp)
    e.paper = "Schlag, Irie & Schmidhuber 2021";
    // zoology/mixers/delta_net.py, DeltaNet.state_size: num_heads * head_k_dim * head_v_dim
    e.zoology = ZoologyCount{"num_heads x head_k_dim x head_v_dim (zoology/mixers/delta_net.py); one head, head_k_dim = d_phi, "
                             "head_v_dim = d_v: equal to memcap's",
                             [](const MemorySize& size, const MemoryShape& s) { return size.dim("d_phi") * s.d_value; }};
    e.size = grid_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<DeltaGrid>(s, spec.real("beta"), spec.text("phi"),
                                           grid_nu(spec), rng);
    };
    e.cost = delta_cost;  // also decides the width race: ties go to the cheapest, dominated candidates are pruned
    e.order_free = false;  // each write edits what the previous ones left
    e.backward = true;     // back through the recurrence (DeltaGrid::write_backward)
    e.causal_backward = true;  // OuterProductGrid::causal_backward, with the per-token beta
    e.layer.beta = true;  // trained frame: β_t = sigmoid(w·x + b)
    // How the reports name it (memcap list --json).
    e.published = "DeltaNet";
    e.cost_growth = "O(n·B): a read-and-correct of the d_φ × d_v grid per write";
    e.plain_name = "delta rule";
    e.same_as = "deltanet";
    e.article = true;
    return e;
}

}  // namespace memcap
