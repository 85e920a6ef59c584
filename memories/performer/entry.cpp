// memcap/memories/performer/entry.cpp — Performer: softmax attention approximated by positive
// random features (FAVOR+), a linear grid over m features with its normaliser (performer.hpp).
//
// Stores:       S, d_v × m; z, m.
// Write:        S ← S + v φ(k)ᵀ, z ← z + φ(k), φ(x) = exp(ω_iᵀ √β x − β‖x‖²/2)/√m, ω_i ~ N(0, I).
// Read:         S φ(q) / zᵀφ(q): the softmax cache's read at sharpness β, estimated.
// state_floats: d_v·m + m, m = floor(B / (d_v + 1)) (d_k without a budget): the paper's K'ᵀV and
//               K'ᵀ1 (d_φ × d_v + d_φ).
// Parameters:   beta = 4 (the kernel exp(β q·k) estimated; beta=best races 1, 2, 4, 8, 16: the
//               cache's sharpness, which random features estimate with relative error
//               √((e^{4β} − 1)/m) at the asked key — performer.hpp).
// Source:       Choromanski et al. 2021, "Rethinking Attention with Performers" (ICLR).
#include "memories/performer/performer.hpp"
#include "memories/registry.hpp"

namespace memcap {

namespace {

using I = std::int64_t;

MemorySize performer_size(const Spec&, const MemoryShape& s) {
    const I m = Performer::features_at(s);
    MemorySize size;
    size.dims = {{"m", m}};
    size.state_floats = I{s.d_value} * m + m;
    size.param_floats = m * s.d_key;
    size.min_budget = I{s.d_value} + 1;  // m = 1
    return size;
}

KernelCost performer_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const MemorySize size = performer_size(spec, s);
    const double m = double(size.dim("m")), b = double(batch);
    KernelCost c;
    // the features (2 per ω entry, an exp each), then the grid's outer product or product and z
    c.flops = b * (2.0 * double(size.param_floats) + 10.0 * m + 2.0 * s.d_value * m + 2.0 * m);
    c.bytes = batch_bytes(s, batch) +
              kFloat * (double(size.param_floats) + (k == Kernel::write_batch ? 2.0 : 1.0) * double(size.state_floats));
    c.scratch_bytes = kFloat * 2.0 * m;
    return c;
}

}  // namespace

MemoryEntry performer_entry() {
    MemoryEntry e;
    e.name = "performer";
    e.description = "Performer (FAVOR+): softmax attention through m positive random features, S phi(q) / z.phi(q)";
    e.params = {real_param("beta", "4", "the softmax kernel exp(beta q.k) the features estimate", 0.0, true, 64.0)};
    e.params[0].best = {"1", "2", "4", "8", "16"};
    e.state_formula = "d_v x m + m (S and the normaliser z), m = floor(B / (d_v + 1)) random features; d_k without a budget";
    e.paper = "Choromanski et al. 2021 (Performer)";
    e.size = performer_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<Performer>(s, spec.real("beta"), rng);
    };
    e.cost = performer_cost;
    e.order_free = true;  // S and z are sums
    // How the reports name it (memcap list --json).
    e.published = "Performer";
    e.cost_growth = "O(n·B): m random features (m·d exps and products) and their grid, m·d_v ≈ B";
    return e;
}

}  // namespace memcap
