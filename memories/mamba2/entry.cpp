// memcap/memories/mamba2/entry.cpp — Mamba-2 / SSD: the selective model under its published name.
//
// The same memory as `selective` (memories/selective/selective_state.hpp), whose scalar decay
// is Mamba-2's: h_t = exp(Δ_t A) h_{t−1} + Δ_t B_t x_tᵀ (Dao & Gu 2024, SSD with a scalar A
// per head) is S ← ρ^Δ S + Δ v φ(k)ᵀ with A = log ρ, B_t = φ(k_t), x_t = v_t, C_t = φ(q); the
// step Δ is the salience step (1 on tasks that declare no salience feature). Every parameter,
// the sizing, the cost model and the backward pass are selective's.
// Source:       Dao & Gu 2024, "Transformers are SSMs: Generalized Models and Efficient
//               Algorithms Through Structured State Space Duality" (ICML).
#include "memories/registry.hpp"

namespace memcap {

MemoryEntry selective_entry();

MemoryEntry mamba2_entry() {
    MemoryEntry e = selective_entry();
    e.name = "mamba2";
    e.description = "Mamba-2 / SSD: S <- exp(Delta A) S + Delta v phi(k)^T (the same memory as selective)";
    e.paper = "Dao & Gu 2024 (Mamba-2, SSD)";
    // How the reports name it (memcap list --json).
    e.published = "Mamba-2";
    e.cost_growth = "O(n·B)";
    e.same_as = "selective";
    e.reduces_to = "linear";
    e.reduces_when = "rho=1";
    // zoology/mixers/mamba2.py, Mamba2.state_size: 2 * d_model * d_state (expand = 2)
    e.zoology = ZoologyCount{"2 x d_model x d_state (zoology/mixers/mamba2.py; expand = 2: d_inner = 2 d_model channels of "
                             "d_state each); d_inner = d_v channels, d_state = d_phi: equal to memcap's (d_model = d_v / 2, d_v even)",
                             e.zoology->floats};
    return e;
}

}  // namespace memcap
