// memcap/memories/linear/entry.cpp — the linear backend's table entry (LinearGrid).
#include "memories/linear/linear_grid.hpp"
#include "memories/grid/grid_entry.hpp"

namespace memcap {
namespace {

using I = std::int64_t;

KernelCost linear_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    return grid_cost(spec, s, k, batch, 0.0);
}

}  // namespace

MemoryEntry linear_entry() {
    MemoryEntry e;
    e.name = "linear";
    e.description = "linear-attention / fast-weight outer-product grid";
    e.params = {grid_phi_param(), grid_nu_param()};
    e.state_formula = "d_v x d_phi, d_phi = floor(B / d_v) (dpfp: rounded down to a multiple of 2 nu); d_k without a budget";
    e.paper = "Katharopoulos et al. 2020; Schlag, Irie & Schmidhuber 2021";
    e.size = grid_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<LinearGrid>(s, spec.text("phi"), static_cast<int>(spec.integer("nu")), rng);
    };
    e.cost = linear_cost;  // also decides the width race: ties go to the cheapest, dominated candidates are pruned
    e.order_free = true;  // M = sum of v phi(k)^T
    e.backward = true;    // OuterProductGrid::backward
    return e;
}

}  // namespace memcap
