// memcap/memories/selective/entry.cpp — the selective backend's table entry (SelectiveState).
#include "memories/selective/selective_state.hpp"
#include "memories/grid/grid_entry.hpp"

namespace memcap {
namespace {

using I = std::int64_t;

KernelCost selective_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const double d_phi = grid_dims(spec, s).phi.dim;
    // a write also computes the gate (2 d_v + 4; only with gate=salience and a declared
    // salience feature, else Δ = 1) and scales φ's row by its weight (d_phi)
    const double gate = spec.text("gate") == "salience" && s.salience_feature ? 2.0 * s.d_value + 4.0 : 0.0;
    KernelCost c = grid_cost(spec, s, k, batch, k == Kernel::write_batch ? gate + d_phi : 0.0);
    if (k == Kernel::write_batch) c.scratch_bytes += kFloat * double(batch) * (d_phi + 1.0);  // the weighted rows, the weights
    return c;
}

}  // namespace

MemoryEntry selective_entry() {
    MemoryEntry e;
    e.name = "selective";
    e.description = "selective state model S <- a(x) S + b(x) v phi(k)^T, input-dependent step (Mamba)";
    e.params = {real_param("rho", "1", "decay per full step (1 = none)", 0.0, true, 1.0),
                choice_param("gate", {"salience", "none"},
                             "step from the task's declared salience feature (1 when none), or always 1"),
                grid_phi_param(), grid_nu_param()};
    // selective:rho=best: no decay (the range's end), then decays whose memory spans
    // about 1000, 300, 100, 30 and 10 writes
    e.params[0].best = {"1", "0.999", "0.997", "0.99", "0.97", "0.9"};
    e.state_formula = "d_v x d_phi, as linear";
    e.gates.log_decay = e.gates.write_gate = true;  // SelectiveState::write_gated
    e.splits_into_heads = true;  // heads=h (memories/heads.hpp)
    e.paper = "Gu & Dao 2023 (Mamba); Dao & Gu 2024";
    // zoology/mixers/mamba.py, Mamba.state_size: 2 * d_model * d_state (expand = 2: d_inner = 2 d_model
    // channels, each a d_state vector)
    e.zoology = ZoologyCount{"2 x d_model x d_state (zoology/mixers/mamba.py; expand = 2: d_inner = 2 d_model channels of d_state "
                             "each); d_inner = d_v channels, d_state = d_phi: equal to memcap's (d_model = d_v / 2, d_v even)",
                             [](const MemorySize& size, const MemoryShape& s) { return 2 * (s.d_value / 2) * size.dim("d_phi"); }};
    e.size = grid_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<SelectiveState>(s, spec.real("rho"), spec.text("gate") == "salience",
                                                spec.text("phi"), grid_nu(spec), rng);
    };
    e.cost = selective_cost;  // also decides the width race: ties go to the cheapest, dominated candidates are pruned
    e.order_free = true;  // with its default rho = 1 no write decays another: a weighted sum of v phi(k)^T
    e.backward = true;    // the gates read only the values (SelectiveState::write_backward)
    e.causal_backward = true;  // OuterProductGrid::causal_backward, with the log decay and write gate
    e.layer.decay = LayerGates::Decay::scalar_softplus, e.layer.write_gate = true;  // trained frame: Mamba-2's Δ_t and A
    // How the reports name it (memcap list --json).
    e.published = "Mamba-2";
    e.cost_growth = "O(n·B)";
    e.same_as = "mamba2";
    e.reduces_to = "linear";
    e.reduces_when = "rho=1";
    return e;
}

}  // namespace memcap
