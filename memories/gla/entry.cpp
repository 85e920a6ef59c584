// memcap/memories/gla/entry.cpp — gated linear attention (GatedGrid, additive, a decay per
// channel).
//
// Stores:       S, d_v × d_φ floats (as `linear`).
// Write:        S ← S·diag(a_t) + v φ(k)ᵀ (Yang et al. 2024, eq. 3: S_t = (α_tᵀ 1) ⊙ S_{t−1}
//               + k_tᵀ v_t with S d_k × d_v, so its per-key-channel gate α_t is diag(a_t) on
//               the key side here). Channel decays a_j = α^(j/(d_φ−1)), log-spaced from 1 to
//               α (gated_grid.hpp); with gate=salience and a task that declares a salience
//               feature, a_t = a^Δ and the write is Δ v φᵀ (Δ = 0 skips a filler token).
//               GLA's α_t is a learned sigmoid of the input; untrained, the spread is the
//               raced constant and the salience step is its only input dependence.
// Read:         S φ(q).
// state_floats: d_v × d_φ, d_φ = floor(B / d_v).
// Parameters:   alpha = 0.9 (the fastest channel's decay, (0, 1]; alpha=best races 1, 0.99,
//               0.97, 0.9, 0.7, 0.5; 1 is `linear`), gate = salience, phi, nu.
// Source:       Yang, Wang, Shen, Panda & Kim 2024, "Gated Linear Attention Transformers
//               with Hardware-Efficient Training" (ICML).
#include "memories/grid/gated_entry.hpp"

namespace memcap {

MemoryEntry gla_entry() {
    MemoryEntry e = gated_grid_entry([](const Spec& spec) {
        GatedGrid::Rule r;
        r.form = GatedGrid::Rule::Form::additive;
        r.alpha = spec.real("alpha");
        r.per_channel = true;
        r.gated = spec.text("gate") == "salience";
        return r;
    });
    e.name = "gla";
    e.description = "gated linear attention: S <- S diag(a) + v phi(k)^T, a decay per channel";
    e.params = {decay_param("alpha", "0.9", "the fastest channel's decay (channels log-spaced from 1; 1 = linear)",
                            channel_decay_candidates()),
                gate_param(), grid_phi_param(), grid_nu_param()};
    e.state_formula = "d_v x d_phi, as linear";
    e.gates = GateInputs{true, true, false, true};  // log_decay, channel_decay, beta, write_gate (GatedGrid::write_gated)
    e.layer.decay = LayerGates::Decay::channel_gla;  // trained frame: low-rank per-channel α_t
    e.paper = "Yang et al. 2024 (GLA)";
    // How the reports name it (memcap list --json).
    e.published = "GLA";
    e.cost_growth = "O(n·B)";
    e.reduces_to = "linear";
    e.reduces_when = "alpha=1";
    // zoology/mixers/gla.py, GatedLinearAttention.state_size: key_dim * head_v_dim, plus the short
    // convolutions' state when use_short_conv (default False; memcap's GLA has none)
    e.zoology = ZoologyCount{"key_dim x head_v_dim, + the short convolutions' state with use_short_conv (zoology/mixers/gla.py); "
                             "one head, key_dim = d_phi, head_v_dim = d_v, no short convolution: equal to memcap's",
                             [](const MemorySize& size, const MemoryShape& s) { return size.dim("d_phi") * s.d_value; }};
    return e;
}

}  // namespace memcap
