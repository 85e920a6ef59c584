// memcap/memories/deltaproduct/entry.cpp — Gated DeltaProduct (DeltaProductGrid).
//
// Stores:       S, d_v × d_φ floats (as `delta`).
// Write:        S ← α S, then n_h steps S ← S (I − β κ κᵀ) + β v κᵀ, κ = φ(k) of unit length
//               (Siems et al. 2025, eq. 4 with Gated DeltaNet's decay; its n_h keys are learned
//               projections — untrained, the token's one key n_h times: deltaproduct_grid.hpp
//               says why).
// Read:         S φ(q), φ(q) normalised.
// state_floats: d_v × d_φ, d_φ = floor(B / d_v).
// Parameters:   steps = 2 (n_h, 1..8; 1 is DeltaNet), alpha = 1 ((0, 1]; no candidates,
//               so d=best races beta alone; alpha=best:1/0.99/... races a list), beta = 0.5 ((0, 2]; beta=best races delta's 0.01 … 1.5),
//               phi, nu.
// Source:       Siems, Carstensen, Zela, Hutter, Pontil & Grazzi 2025, "DeltaProduct: Improving
//               State-Tracking in Linear RNNs via Householder Products".
#include "memories/deltaproduct/deltaproduct_grid.hpp"
#include "memories/grid/gated_entry.hpp"

namespace memcap {

MemoryEntry deltaproduct_entry() {
    MemoryEntry e;
    e.name = "deltaproduct";
    e.description = "Gated DeltaProduct: S <- alpha S, then n_h delta steps S <- S (I - beta phi phi^T) + beta v phi^T";
    e.params = {int_param("steps", "2", "n_h: Householder (delta-rule) steps per token; 1 = DeltaNet", 1, 8),
                decay_param("alpha", "1", "decay per token (1 = none)", {}),
                strength_param("beta", "0.5", "step beta of each Householder step"), grid_phi_param(), grid_nu_param()};
    e.state_formula = "d_v x d_phi, as linear";
    e.paper = "Siems et al. 2025 (DeltaProduct)";
    e.size = grid_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<DeltaProductGrid>(s, spec.real("alpha"), spec.real("beta"), static_cast<int>(spec.integer("steps")),
                                                  spec.text("phi"), grid_nu(spec), rng);
    };
    e.cost = [](const Spec& spec, const MemoryShape& s, Kernel k, std::int64_t, std::int64_t batch) {
        const double d_phi = grid_dims(spec, s).phi.dim, steps = double(spec.integer("steps"));
        const double extra =
            3.0 * d_phi + 2.0 + (k == Kernel::write_batch ? steps * (4.0 * s.d_value * d_phi + 2.0 * s.d_value) : 0.0);
        return grid_cost(spec, s, k, batch, extra);
    };
    e.gates = GateInputs{true, false, true, false};  // log_decay, beta (DeltaProductGrid::write_gated)
    // How the reports name it (memcap list --json).
    e.published = "Gated DeltaProduct";
    e.cost_growth = "O(n·B·n_h): n_h read-and-correct steps of the grid per write";
    e.reduces_to = "delta";
    e.reduces_when = "steps=1,alpha=1";
    return e;
}

}  // namespace memcap
