// memcap/memories/grid/grid_entry.cpp — see grid_entry.hpp.
#include "memories/grid/grid_entry.hpp"

namespace memcap {

ParamInfo grid_phi_param() {
    return choice_param("phi", {"proj", "dpfp", "taylor"},
                        "feature map when d_phi != d_k (identity otherwise); taylor: Based's [1, y, y(x)y/sqrt 2]");
}
ParamInfo grid_nu_param() { return int_param("nu", "1", "DPFP order (phi=dpfp)", 1, 8); }

int grid_nu(const Spec& spec) { return spec.text("phi") == "dpfp" ? static_cast<int>(spec.integer("nu")) : 1; }

OuterProductGrid::Dims grid_dims(const Spec& spec, const MemoryShape& s) {
    return OuterProductGrid::size(s, spec.text("phi"), grid_nu(spec));
}

MemorySize grid_size(const Spec& spec, const MemoryShape& s) {
    const OuterProductGrid::Dims g = grid_dims(spec, s);
    MemorySize m;
    m.dims = {{"d_phi", g.phi.dim}};
    if (spec.text("phi") != "proj") m.dims.emplace_back("m", g.phi.m);  // the projection before DPFP or Taylor
    m.state_floats = g.state_floats();
    m.param_floats = g.phi.param_floats;
    m.build_scratch_bytes = g.phi.build_scratch_bytes;
    m.min_budget = g.min_budget;
    return m;
}

namespace {

using I = std::int64_t;

// φ of a batch: the feature rows, and for DPFP the projected rows and [relu(y), relu(−y)].
double phi_scratch_bytes(const OuterProductGrid::Dims& g, bool dpfp, I batch) {
    return kFloat * double(batch) * (g.phi.dim + (dpfp ? 3.0 * g.phi.m : g.phi.m));
}

// The feature map's FLOPs per row: the projection (2 per parameter), DPFP's relus and products,
// and the Taylor map's m(m+1)/2 products of y yᵀ's lower triangle (each a product and a scaling).
double phi_flops_per_row(const OuterProductGrid::Dims& g, const std::string& kind, I nu) {
    const double m = g.phi.m;
    return 2.0 * double(g.phi.param_floats) +
           (kind == "dpfp" ? 2.0 * m + 2.0 * m * double(nu) : kind == "taylor" ? m * (m + 1.0) : 0.0);
}

}  // namespace

// Σ v φ(k)ᵀ grids (linear, selective): a write is one GEMM, a read is one GEMM.
KernelCost grid_cost(const Spec& spec, const MemoryShape& s, Kernel k, I batch, double extra_per_row) {
    const OuterProductGrid::Dims g = grid_dims(spec, s);
    const bool dpfp = spec.text("phi") == "dpfp";
    const double d_phi = g.phi.dim, state = double(g.state_floats()), b = double(batch);
    KernelCost c;
    c.flops = b * (phi_flops_per_row(g, spec.text("phi"), grid_nu(spec)) + extra_per_row + 2.0 * s.d_value * d_phi);
    c.bytes = batch_bytes(s, batch) + kFloat * (double(g.phi.param_floats) + (k == Kernel::write_batch ? 2.0 : 1.0) * state);
    c.scratch_bytes = phi_scratch_bytes(g, dpfp, batch);
    return c;
}

}  // namespace memcap
