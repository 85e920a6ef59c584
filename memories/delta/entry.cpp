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
    e.params[0].best = {"0.25", "0.5", "1", "1.5"};  // delta:beta=best
    e.state_formula = "d_v x d_phi, as linear";
    e.paper = "Schlag, Irie & Schmidhuber 2021";
    e.size = grid_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<DeltaGrid>(s, spec.real("beta"), spec.text("phi"),
                                           static_cast<int>(spec.integer("nu")), rng);
    };
    e.cost = delta_cost;  // also decides the width race: ties go to the cheapest, dominated candidates are pruned
    e.order_free = false;  // each write edits what the previous ones left
    e.backward = true;     // back through the recurrence (DeltaGrid::write_backward)
    return e;
}

}  // namespace memcap
