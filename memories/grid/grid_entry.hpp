// memcap/memories/grid/grid_entry.hpp — what the entries of the grid memories share.
//
// The linear, delta and selective entries (memories/<name>/entry.cpp) take their
// feature-map parameters, their sizing function and the FLOP-and-byte model of their
// Σ v φ(k)ᵀ grid from here.
#pragma once

#include "memories/grid/outer_product_grid.hpp"
#include "memories/registry.hpp"

namespace memcap {

/// `phi` and `nu`, the feature map's parameters every grid memory takes.
ParamInfo grid_phi_param();
ParamInfo grid_nu_param();

/// `spec`'s DPFP order: its nu with phi=dpfp, else 1 (the other maps have none).
int grid_nu(const Spec& spec);
/// OuterProductGrid::size for `spec`'s phi and nu.
OuterProductGrid::Dims grid_dims(const Spec& spec, const MemoryShape& s);

/// The grid memories' sizing function as a MemorySize.
MemorySize grid_size(const Spec& spec, const MemoryShape& s);

/// Σ v φ(k)ᵀ grids: a write is one GEMM, a read is one GEMM, plus `extra_per_row` FLOPs
/// per item (the backend's own work).
KernelCost grid_cost(const Spec& spec, const MemoryShape& s, Kernel k, std::int64_t batch, double extra_per_row);

}  // namespace memcap
