// memcap/memories/gated_deltanet/entry.cpp — Gated DeltaNet (GatedGrid, delta rule after a
// scalar decay).
//
// Stores:       S, d_v × d_φ floats (as `delta`).
// Write:        S ← α_t S (I − β_t φ φᵀ) + β_t v φᵀ, φ = φ(k) of unit length (Yang, Kautz &
//               Hatamizadeh 2025, eq. 10, S_t = S_{t−1}(α_t(I − β_t k_t k_tᵀ)) + β_t v_t k_tᵀ
//               in its d_v × d_k orientation, memcap's). α_t = α^Δ and β_t = β Δ with Δ the
//               salience step (gate=salience and a declared feature; else Δ = 1: the raced
//               constants). step=longhorn takes β_t = β Δ / (1 + β): Longhorn's step at unit keys.
// Read:         S φ(q), φ(q) normalised.
// state_floats: d_v × d_φ, d_φ = floor(B / d_v).
// Parameters:   alpha = 0.99 ((0, 1]; alpha=best races 1, 0.999, 0.99, 0.97, 0.9; 1 is
//               `delta`), beta = 1 ((0, 2]; beta=best races delta's 0.01 … 1.5), step, gate,
//               phi, nu.
// Source:       Yang, Kautz & Hatamizadeh 2025, "Gated Delta Networks: Improving Mamba2 with
//               Delta Rule" (ICLR).
#include "memories/grid/gated_entry.hpp"

namespace memcap {

MemoryEntry gated_deltanet_entry() {
    MemoryEntry e = gated_grid_entry([](const Spec& spec) {
        GatedGrid::Rule r;
        r.form = GatedGrid::Rule::Form::delta_decay_first;
        r.alpha = spec.real("alpha");
        r.beta = spec.real("beta");
        r.longhorn = spec.text("step") == "longhorn";
        r.gated = spec.text("gate") == "salience";
        return r;
    });
    e.name = "gated_deltanet";
    e.description = "Gated DeltaNet: S <- alpha S (I - beta phi phi^T) + beta v phi^T";
    e.params = {decay_param("alpha", "0.99", "decay per write (1 = delta)", {"1", "0.999", "0.99", "0.97", "0.9"}),
                strength_param("beta", "1", "write strength beta"), step_rule_param(), gate_param(), grid_phi_param(),
                grid_nu_param()};
    e.state_formula = "d_v x d_phi, as linear";
    e.gates = GateInputs{true, false, true, true};  // log_decay, channel_decay, beta, write_gate (GatedGrid::write_gated)
    e.layer.decay = LayerGates::Decay::scalar_softplus, e.layer.beta = true;  // trained frame: α_t as Mamba-2's decay, β_t
    e.paper = "Yang, Kautz & Hatamizadeh 2025";
    // How the reports name it (memcap list --json).
    e.published = "Gated DeltaNet";
    e.cost_growth = "O(n·B)";
    e.reduces_to = "delta";
    e.reduces_when = "alpha=1";
    // zoology/mixers/gated_delta_net.py, GatedDeltaNet.state_size: num_heads * head_k_dim * head_v_dim
    e.zoology = ZoologyCount{"num_heads x head_k_dim x head_v_dim (zoology/mixers/gated_delta_net.py); one head, head_k_dim = "
                             "d_phi, head_v_dim = d_v: equal to memcap's",
                             [](const MemorySize& size, const MemoryShape& s) { return size.dim("d_phi") * s.d_value; }};
    return e;
}

}  // namespace memcap
