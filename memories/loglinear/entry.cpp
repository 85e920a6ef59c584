// memcap/memories/loglinear/entry.cpp — the loglinear backend's table entry (LogLinear).
#include "memories/grid/grid_entry.hpp"
#include "memories/loglinear/loglinear.hpp"
#include "memories/registry.hpp"

namespace memcap {
namespace {

using I = std::int64_t;

LogLinear::Dims loglinear_dims(const Spec& spec, const MemoryShape& s) {
    return LogLinear::size(s, spec.text("phi"), grid_nu(spec), static_cast<int>(spec.integer("levels")));
}

MemorySize loglinear_size(const Spec& spec, const MemoryShape& s) {
    const LogLinear::Dims d = loglinear_dims(spec, s);
    MemorySize m;
    m.dims = {{"levels", d.levels}, {"d_phi", d.phi.dim}};
    if (spec.text("phi") != "proj") m.dims.emplace_back("m", d.phi.m);
    m.state_floats = d.state_floats();
    m.param_floats = d.phi.param_floats;
    m.build_scratch_bytes = d.phi.build_scratch_bytes;
    m.min_budget = d.min_budget;
    return m;
}

// A write: φ (as the grid's), the carry (amortised: 2 levels' adds a write) and the rank-1 add;
// a read: the levels' weighted sum (2 L d_v d_φ, once a batch) and one GEMM row.
KernelCost loglinear_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const LogLinear::Dims d = loglinear_dims(spec, s);
    const double level = double(d.level_floats()), b = double(batch), L = d.levels;
    KernelCost c;
    const double phi = 2.0 * double(d.phi.param_floats);
    if (k == Kernel::write_batch) {
        c.flops = b * (phi + 2.0 * level + (L >= 2 ? 2.0 * level : 0.0));
        c.bytes = batch_bytes(s, batch) + kFloat * (double(d.phi.param_floats) + 2.0 * double(d.state_floats()));
    } else {
        c.flops = (L >= 2 ? 2.0 * L * level : 0.0) + b * (phi + 2.0 * level);
        c.bytes = batch_bytes(s, batch) + kFloat * (double(d.phi.param_floats) + double(d.state_floats()));
    }
    c.scratch_bytes = kFloat * (b * d.phi.dim + (L >= 2 ? level : 0.0));
    return c;
}

}  // namespace

MemoryEntry loglinear_entry() {
    MemoryEntry e;
    e.name = "loglinear";
    e.description = "log-linear attention: a Fenwick tree of linear-attention grids, one per level, read with level weights";
    ParamInfo levels = int_param("levels", "3", "levels L of the Fenwick tree (the last holds every older block); 1: the linear grid", 1, 16);
    levels.best = {"1", "2", "3", "4", "6", "8"};
    ParamInfo ratio = real_param("ratio", "0.5", "level weights lambda_l = ratio^l (1: every level alike)", 0.0, true, 1.0);
    ratio.best = {"1", "0.7", "0.5", "0.3", "0.1"};
    e.params = {levels, ratio, grid_phi_param(), grid_nu_param()};
    e.state_formula = "L x d_v x d_phi (+ 1, the write count mod 2^(L-1), when L >= 2), d_phi = floor(floor((B - [L >= 2]) / L) / d_v) "
                      "(dpfp: rounded down to a multiple of 2 nu): the budget divided equally among the L levels; d_k per level without a budget";
    e.paper = "Guo, Yang, Goel, Xing, Dao & Kim 2025 (Log-Linear Attention)";
    e.size = loglinear_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<LogLinear>(s, spec.text("phi"), grid_nu(spec), static_cast<int>(spec.integer("levels")),
                                           spec.real("ratio"), rng);
    };
    e.cost = loglinear_cost;
    e.published = "log-linear attention";
    e.table_name = "log-linear attention (untrained level weights)";
    e.reduces_to = "linear";
    e.reduces_when = "levels=1";
    return e;
}

}  // namespace memcap
