// memcap/memories/rotation/entry.cpp — the rotation backend's table entry (RotationRnn).
#include "memories/rotation/rotation_rnn.hpp"
#include "memories/registry.hpp"

namespace memcap {
namespace {

using I = std::int64_t;

MemorySize rotation_size(const Spec& spec, const MemoryShape& s) {
    const RotationRnn::Dims r = RotationRnn::size(s, spec.text("angles"));
    MemorySize m;
    m.dims = {{"D", r.dim}, {"d_in", r.d_in}};
    m.state_floats = r.dim;
    m.param_floats = r.param_floats();
    m.build_scratch_bytes = r.build_scratch_bytes;
    m.min_budget = 1;
    return m;
}

KernelCost rotation_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const RotationRnn::Dims r = RotationRnn::size(s, spec.text("angles"));
    const double dim = r.dim, b = double(batch);
    const double map = r.input_map ? dim * r.d_in : 0.0;
    KernelCost c;
    c.bytes = batch_bytes(s, batch) + kFloat * ((k == Kernel::write_batch ? 2.0 : 1.0) * dim + map);
    if (k == Kernel::write_batch) {  // U x (one GEMM), then per step 5 FLOPs per state float (2 × 2 rotation, decay, add)
        // (positional keys: the tokens' U x kept across batches, the map paid once per token a cell)
        c.flops = b * ((s.positional_keys ? 0.0 : 2.0 * map) + 5.0 * dim);
        // the inputs as rows; with U also their distinct rows, mapped, and the index of each
        // (at most every row distinct; about 80 bytes per row for the index and its hash table)
        if (!(s.positional_keys && !r.input_map))
            c.scratch_bytes = kFloat * b * r.d_in + (r.input_map ? kFloat * b * (r.d_in + dim) + 80.0 * b : 0.0);
        // with positional keys, up to kKeptInputs mapped inputs kept across batches, and their index
        if (s.positional_keys && r.input_map)
            c.scratch_bytes += double(RotationRnn::kKeptInputs) * (kFloat * dim + 80.0 + kFloat * r.d_in);
    } else {  // read() decodes U_vᵀ s per query (the native read ignores the query)
        c.flops = b * 2.0 * dim * s.d_value;
    }
    return c;
}

}  // namespace

MemoryEntry rotation_entry() {
    MemoryEntry e;
    e.name = "rotation";
    e.description = "decaying rotation RNN s <- rho R s + U x, read by a least-squares probe";
    e.params = {real_param("rho", "0.9", "decay per step", 0.0, false, 1.0, true),
                choice_param("angles", {"uniform", "haar"},
                             "rotation angles: i.i.d. uniform, or those of a Haar R (D <= 2048)")};
    // rotation:rho=best: from a fast decay to the slowest the range allows (rho < 1)
    e.params[0].best = {"0.5", "0.8", "0.9", "0.95", "0.98", "0.99"};
    e.state_formula = "D = B (d without a budget)";
    e.paper = "essay 004 Part 1";
    e.size = rotation_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<RotationRnn>(s, spec.real("rho"), spec.text("angles"), rng);
    };
    e.cost = rotation_cost;  // also decides the width race: ties go to the cheapest, dominated candidates are pruned
    e.cost_growth = "O(n·B) writes; its read is the probe, fitted per cell on 2000 training rows: O(R²·B) once B > R = 2000";
    e.native_read = false;  // read() ignores the query: scored through the probe
    e.order_free = false;   // each step rotates and decays what came before
    return e;
}

}  // namespace memcap
