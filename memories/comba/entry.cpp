// memcap/memories/comba/entry.cpp — Comba (CombaGrid).
//
// Stores:       S, d_v × d_φ floats (as `delta`).
// Write:        u = β (v − S p), S ← α S + u φᵀ, p = b φ, φ = φ(k) of unit length (Hu et al. 2025:
//               S ← e^g S + β k (v − Sᵀp)ᵀ in its d_k × d_v orientation; comba_grid.hpp).
// Read:         S φ(q), φ(q) normalised (the output correction q − D p is not built: a memcap
//               read has no key of its own; comba_grid.hpp).
// state_floats: d_v × d_φ, d_φ = floor(B / d_v).
// Parameters:   removal = 0.5 (b = σ(d) ∈ (0, 1]; removal=best races 1, 0.9, 0.7, 0.5, 0.3; 1 with
//               alpha = 1 is `delta`), alpha = 1 ((0, 1]; no candidates: a decay is not what Comba
//               adds, so d=best races removal x beta only; alpha=best:1/0.99/... races a list), beta = 1 ((0, 2]; beta=best races delta's 0.01 … 1.5), phi, nu.
// Source:       Hu, Pan, Du, Lan, Tang, Wen, Liang & Sun 2025, "Comba: Improving Bilinear RNNs
//               with Closed-loop Control".
#include "memories/comba/comba_grid.hpp"
#include "memories/grid/gated_entry.hpp"

namespace memcap {

MemoryEntry comba_entry() {
    MemoryEntry e;
    e.name = "comba";
    e.description = "Comba: S <- alpha S + beta (v - S p) phi^T, p = b phi (a shrunk removal key)";
    e.params = {real_param("removal", "0.5", "b = sigma(d): the removal key p = b phi (1 = the delta rule)", 0.0, true, 1.0),
                decay_param("alpha", "1", "decay per token (1 = none)", {}),
                strength_param("beta", "1", "write strength beta"), grid_phi_param(), grid_nu_param()};
    e.params[0].best = {"1", "0.9", "0.7", "0.5", "0.3"};
    e.state_formula = "d_v x d_phi, as linear";
    e.paper = "Hu et al. 2025 (Comba)";
    e.size = grid_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<CombaGrid>(s, spec.real("alpha"), spec.real("beta"), spec.real("removal"), spec.text("phi"),
                                           grid_nu(spec), rng);
    };
    e.cost = [](const Spec& spec, const MemoryShape& s, Kernel k, std::int64_t, std::int64_t batch) {
        const double d_phi = grid_dims(spec, s).phi.dim;
        const double extra = 4.0 * d_phi + 2.0 + (k == Kernel::write_batch ? 4.0 * s.d_value * d_phi + 2.0 * s.d_value : 0.0);
        return grid_cost(spec, s, k, batch, extra);
    };
    e.gates = GateInputs{true, false, true, false};  // log_decay, beta (CombaGrid::write_gated)
    // How the reports name it (memcap list --json).
    e.published = "Comba";
    e.cost_growth = "O(n·B): a read-and-correct of the grid per write";
    e.reduces_to = "delta";
    e.reduces_when = "removal=1,alpha=1";
    return e;
}

}  // namespace memcap
