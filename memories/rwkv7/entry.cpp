// memcap/memories/rwkv7/entry.cpp — RWKV-7's generalised delta rule (GatedGrid, removal
// before a decay per channel).
//
// Stores:       S, d_v × d_φ floats (the paper's wkv state, d_v × d_k, memcap's orientation).
// Write:        RWKV-7 (Peng et al. 2025, eq. 16): S_t = S_{t−1} (diag(w_t) − κ̂_tᵀ (a_t ⊙ κ̂_t))
//               + v_tᵀ k̃_t, with removal key κ̂ = normalised k ⊙ ξ, in-context learning rate
//               a_t, write key k̃ = k ⊙ (1 + (a_t − 1) ⊙ k_a). Here:
//                 - the key k is φ(k) normalised to unit length;
//                 - ξ = 1 (the removal key is set from the key: κ̂ = φ);
//                 - k_a = 1 (the write key is k̃ = a ⊙ φ, the paper's delta-rule limit);
//                 - a_t = a, one raced in-context learning rate for every channel (times the
//                   salience step Δ with gate=salience and a declared feature);
//                 - w: channel decays log-spaced from 1 to w (gated_grid.hpp; raced), to the
//                   power Δ; the paper's w_t lies in (e^(−e^(−1/2)), 1) ≈ (0.545, 1).
//               So S ← S·diag(w) + a (v − S φ) φᵀ: the delta rule whose removal reads the
//               state before it decays (Gated DeltaNet and KDA read it after).
// Read:         S φ(q) (the receptance r = q), φ(q) normalised.
// state_floats: d_v × d_φ, d_φ = floor(B / d_v).
// Parameters:   w = 0.9 (the fastest channel's decay; w=best races 1, 0.99, 0.97, 0.9, 0.7,
//               0.5), a = 1 (in-context learning rate, (0, 1]; a=best races 0.01 … 1), gate,
//               phi, nu. Fixed random: only the feature map's projection, as every grid.
// Source:       Peng et al. 2025, "RWKV-7 'Goose' with Expressive Dynamic State Evolution".
#include "memories/grid/gated_entry.hpp"

namespace memcap {

MemoryEntry rwkv7_entry() {
    MemoryEntry e = gated_grid_entry([](const Spec& spec) {
        GatedGrid::Rule r;
        r.form = GatedGrid::Rule::Form::delta_removal_first;
        r.alpha = spec.real("w");
        r.per_channel = true;
        r.beta = spec.real("a");
        r.gated = spec.text("gate") == "salience";
        return r;
    });
    e.name = "rwkv7";
    e.description = "RWKV-7 generalised delta rule: S <- S (diag(w) - a phi phi^T) + a v phi^T";
    e.params = {decay_param("w", "0.9", "the fastest channel's decay (channels log-spaced from 1)", channel_decay_candidates()),
                strength_param("a", "1", "in-context learning rate", 1.0), gate_param(), grid_phi_param(), grid_nu_param()};
    e.state_formula = "d_v x d_phi, as linear";
    e.gates = GateInputs{true, true, true, true};  // log_decay, channel_decay, beta, write_gate (GatedGrid::write_gated)
    e.layer.decay = LayerGates::Decay::channel_rwkv, e.layer.beta = true;  // trained frame: w_t, a_t
    e.paper = "Peng et al. 2025 (RWKV-7)";
    // How the reports name it (memcap list --json).
    e.published = "RWKV-7";
    e.cost_growth = "O(n·B)";
    return e;
}

}  // namespace memcap
