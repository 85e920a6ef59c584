// memcap/memories/retnet/entry.cpp — RetNet's retention as a memory (GatedGrid, additive,
// one fixed scalar decay).
//
// Stores:       S, d_v × d_φ floats (as `linear`).
// Write:        S ← γ S + v φ(k)ᵀ (Sun et al. 2023, eq. 1–3, the recurrent form of
//               retention: S_n = γ S_{n−1} + K_nᵀ V_n in the paper's d_k × d_v orientation).
// Read:         S φ(q). The paper's xPos rotation of q and k is a position code: memcap's
//               keys are content codes, so it is left out (it would rotate each stored key
//               by its position and the query by its own, which a content query cannot match).
// state_floats: d_v × d_φ, d_φ = floor(B / d_v).
// Parameters:   gamma = 0.99 ((0, 1]; gamma=best races 1, 0.999, 0.997, 0.99, 0.97, 0.9 —
//               RetNet's heads use 1 − 2^(−5−h), 0.969 to 0.998), phi, nu. No gate: RetNet's
//               decay does not depend on the input.
// Source:       Sun et al. 2023, "Retentive Network: A Successor to Transformer for Large
//               Language Models".
#include "memories/grid/gated_entry.hpp"

namespace memcap {

MemoryEntry retnet_entry() {
    MemoryEntry e = gated_grid_entry([](const Spec& spec) {
        GatedGrid::Rule r;
        r.form = GatedGrid::Rule::Form::additive;
        r.alpha = spec.real("gamma");
        r.gated = false;
        return r;
    });
    e.name = "retnet";
    e.description = "RetNet retention: S <- gamma S + v phi(k)^T, one fixed decay";
    e.params = {decay_param("gamma", "0.99", "decay per write (1 = the linear grid)", {"1", "0.999", "0.997", "0.99", "0.97", "0.9"}),
                grid_phi_param(), grid_nu_param()};
    e.state_formula = "d_v x d_phi, as linear";
    e.gates = GateInputs{true, false, false, true};  // log_decay, channel_decay, beta, write_gate (GatedGrid::write_gated)
    e.paper = "Sun et al. 2023";
    // How the reports name it (memcap list --json).
    e.published = "RetNet";
    e.cost_growth = "O(n·B)";
    return e;
}

}  // namespace memcap
