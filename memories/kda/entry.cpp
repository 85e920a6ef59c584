// memcap/memories/kda/entry.cpp — Kimi Delta Attention (GatedGrid, delta rule after a decay
// per channel).
//
// Stores:       S, d_v × d_φ floats (as `delta`).
// Write:        S ← S·diag(a_t) (I − β_t φ φᵀ) + β_t v φᵀ, φ = φ(k) of unit length: Gated
//               DeltaNet with its scalar α_t replaced by a decay per key channel (Kimi Team
//               2025, S_t = (I − β_t k_t k_tᵀ) Diag(α_t) S_{t−1} + β_t k_t v_tᵀ in its d_k × d_v
//               orientation). Channel decays log-spaced from 1 to α (gated_grid.hpp); a_t = a^Δ,
//               β_t = β Δ with the salience step Δ (1 without a declared feature). step=longhorn
//               as gated_deltanet.
// Read:         S φ(q), φ(q) normalised.
// state_floats: d_v × d_φ, d_φ = floor(B / d_v).
// Parameters:   alpha = 0.9 (the fastest channel's decay; alpha=best races 1, 0.99, 0.97, 0.9,
//               0.7, 0.5; 1 is `delta`), beta = 1 ((0, 2]; raced as delta's), step, gate, phi, nu.
// Source:       Kimi Team 2025, "Kimi Linear: An Expressive, Efficient Attention Architecture".
#include "memories/grid/gated_entry.hpp"

namespace memcap {

MemoryEntry kda_entry() {
    MemoryEntry e = gated_grid_entry([](const Spec& spec) {
        GatedGrid::Rule r;
        r.form = GatedGrid::Rule::Form::delta_decay_first;
        r.alpha = spec.real("alpha");
        r.per_channel = true;
        r.beta = spec.real("beta");
        r.longhorn = spec.text("step") == "longhorn";
        r.gated = spec.text("gate") == "salience";
        return r;
    });
    e.name = "kda";
    e.description = "Kimi Delta Attention: Gated DeltaNet with a decay per channel";
    e.params = {decay_param("alpha", "0.9", "the fastest channel's decay (channels log-spaced from 1; 1 = delta)",
                            channel_decay_candidates()),
                strength_param("beta", "1", "write strength beta"), step_rule_param(), gate_param(), grid_phi_param(),
                grid_nu_param()};
    e.state_formula = "d_v x d_phi, as linear";
    e.gates = GateInputs{true, true, true, true};  // log_decay, channel_decay, beta, write_gate (GatedGrid::write_gated)
    e.layer.decay = LayerGates::Decay::channel_kda, e.layer.beta = true;  // trained frame: per-channel α_t, β_t
    e.paper = "Kimi Team 2025 (Kimi Linear)";
    // How the reports name it (memcap list --json).
    e.published = "KDA";
    e.cost_growth = "O(n·B)";
    return e;
}

}  // namespace memcap
