// memcap/memories/mamba3/entry.cpp — Mamba-3 (SISO), the table entry (Mamba3, mamba3.hpp).
//
// Stores:       S, d_v × d_φ; the previous written token's v' (d_v) and φ' (d_φ).
// Write:        S ← (α S + (1 − λ) Δ α v' φ'ᵀ) R(Δθ)ᵀ + λ Δ v φᵀ (the exponential-trapezoidal rule
//               with complex, rotary transitions; Lahoti et al. 2026), α = ρ^Δ.
// Read:         S φ(q).
// state_floats: d_v·d_φ + d_v + d_φ, d_φ = floor((B − d_v) / (d_v + 1)); d_k without a budget.
// Parameters:   rho = 1 (best: selective's 1 … 0.9), lambda = 0.5 (best: 1, 0.75, 0.5, 0.25),
//               theta = 0.1 (best: 0, 0.01, 0.1, 1), gate = salience. Gates per token: log_decay
//               (Δ_t A, one scalar) and write_gate (Δ_t). λ = 1, θ = 0 is mamba2.
// Source:       Lahoti, Li, Chen, Wang, Bick, Kolter, Dao & Gu 2026 (Mamba-3, ICLR 2026).
#include "memories/grid/gated_entry.hpp"
#include "memories/mamba3/mamba3.hpp"

namespace memcap {

namespace {

using I = std::int64_t;

MemorySize mamba3_size(const Spec&, const MemoryShape& s) {
    const FeatureMap::Dims phi = FeatureMap::size("proj", s.d_key, std::max<I>(1, Mamba3::feature_budget(s)), 1);
    MemorySize m;
    m.dims = {{"d_phi", phi.dim}};
    m.state_floats = I{s.d_value} * phi.dim + s.d_value + phi.dim;
    m.param_floats = phi.param_floats;
    m.build_scratch_bytes = phi.build_scratch_bytes;
    m.min_budget = 2 * I{s.d_value} + 1;  // d_φ = 1
    return m;
}

KernelCost mamba3_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const MemorySize size = mamba3_size(spec, s);
    const double d_phi = double(size.dim("d_phi")), d_v = double(s.d_value), b = double(batch);
    KernelCost c;
    // φ (2 per projection parameter); a write: the decay, the previous token's and this token's
    // outer products and the rotation (6 per entry of S); a read: the product S φ(q)
    const double per = k == Kernel::write_batch ? 2.0 * double(size.param_floats) + 11.0 * d_v * d_phi
                                                : 2.0 * double(size.param_floats) + 2.0 * d_v * d_phi;
    c.flops = b * per;
    c.bytes = batch_bytes(s, batch) +
              kFloat * (double(size.param_floats) + (k == Kernel::write_batch ? 2.0 : 1.0) * double(size.state_floats));
    c.scratch_bytes = kFloat * (d_phi + d_v);
    return c;
}

}  // namespace

MemoryEntry mamba3_entry() {
    MemoryEntry e;
    e.name = "mamba3";
    e.description = "Mamba-3 (SISO): S <- (a S + (1-lambda) Delta a v' phi'^T) R(Delta theta)^T + lambda Delta v phi^T, "
                    "trapezoidal write, rotary (complex) transitions";
    e.params = {decay_param("rho", "1", "decay per full step (1 = none)", {"1", "0.999", "0.997", "0.99", "0.97", "0.9"}),
                real_param("lambda", "0.5", "trapezoid's weight on the current token (1 = Mamba-2's Euler step)", 0.0, /*min_open=*/true, 1.0),
                real_param("theta", "0.1", "rotation: the fastest channel pair's angle per full step (radians; 0 = real)", 0.0,
                           false, 3.14159265358979),
                gate_param()};
    e.params[1].best = {"1", "0.75", "0.5", "0.25"};
    e.params[2].best = {"0", "0.01", "0.1", "1"};
    e.state_formula = "d_v x d_phi + d_v + d_phi (S, and the previous token's x and B for the trapezoid), "
                      "d_phi = floor((B - d_v) / (d_v + 1)); d_k without a budget";
    e.paper = "Lahoti et al. 2026 (Mamba-3)";
    e.size = mamba3_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<Mamba3>(s, spec.real("rho"), spec.real("lambda"), spec.real("theta"),
                                        spec.text("gate") == "salience", rng);
    };
    e.cost = mamba3_cost;
    e.gates.log_decay = e.gates.write_gate = true;  // Mamba3::write_gated: Δ_t A and Δ_t, as mamba2's
    // How the reports name it (memcap list --json).
    e.published = "Mamba-3";
    e.cost_growth = "O(n·B): the decay, two outer products and the pairs' rotation of the grid per write";
    e.reduces_to = "mamba2";
    e.reduces_when = "lambda=1,theta=0";  // the same products on the same features
    return e;
}

}  // namespace memcap
