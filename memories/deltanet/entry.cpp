// memcap/memories/deltanet/entry.cpp — DeltaNet: the published name of the delta-rule grid.
//
// The same memory as `delta` (memories/delta/delta_grid.hpp), under the name of Yang et al.
// 2024's layer: S ← S + β (v − S φ) φᵀ with unit φ, read S φ(q). Every parameter, the sizing,
// the cost model and the backward pass are delta's.
// Source:       Schlag, Irie & Schmidhuber 2021; Yang, Wang, Zhang, Shen & Kim 2024,
//               "Parallelizing Linear Transformers with the Delta Rule over Sequence Length".
#include "memories/registry.hpp"

namespace memcap {

MemoryEntry delta_entry();

MemoryEntry deltanet_entry() {
    MemoryEntry e = delta_entry();
    e.name = "deltanet";
    e.description = "DeltaNet: the delta rule's published layer (the same memory as delta)";
    e.paper = "Schlag et al. 2021; Yang et al. 2024 (DeltaNet)";
    // How the reports name it (memcap list --json).
    e.published = "DeltaNet";
    e.cost_growth = "O(n·B)";
    e.plain_name = "delta rule";
    e.same_as = "delta";
    e.article = true;
    return e;
}

}  // namespace memcap
