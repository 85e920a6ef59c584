// memcap/memories/based/entry.cpp — Based: the linear grid with the second-order Taylor
// feature map.
//
// Stores:       M, d_v × d_φ floats, d_φ = 1 + m + m(m+1)/2 (m the largest that fits floor(B / d_v)):
//               y yᵀ is symmetric, so its m(m+1)/2 unique entries are stored, not m².
// Write:        M += v φ(k)ᵀ, φ(x) = [1, y, y_i²/√2, y_i y_j (i > j)] (the unique entries of
//               [1, y, vec(y yᵀ)/√2], the same kernel), y = P x a fixed semi-orthogonal
//               projection to m dimensions (identity when m = d_k) — feature_map.hpp's
//               `taylor`: φ(q)·φ(k) = 1 + y_q·y_k + (y_q·y_k)²/2 ≈ exp(y_q·y_k).
// Read:         M φ(q).
// state_floats: d_v × (1 + m + m(m+1)/2): narrow keys, a wide state (m = 9 at 4096 floats, d_v = 64);
//               without a budget m = d_k (y = k).
// Parameters:   phi = taylor (the only choice); scale = 1 (> 0; y = scale · P x, so the kernel is
//               1 + s² y·y' + s⁴ (y·y')²/2; scale=best races 0.5, 1, 1.5, 2, 3, 4: the norm a
//               trained projection gives q and k, which sets how sharp the kernel is). The paper's sliding-window half of the Based
//               layer is memcap's `sliding_window`; the paper's 1/√d' scaling of q and k is a
//               learned projection's business here (y has the key's norm).
// Source:       Arora et al. 2024, "Simple linear attention language models balance the
//               recall-throughput tradeoff" (ICML).
#include "memories/grid/grid_entry.hpp"
#include "memories/linear/linear_grid.hpp"

namespace memcap {

MemoryEntry linear_entry();

MemoryEntry based_entry() {
    MemoryEntry e = linear_entry();  // the same grid, sizing, cost model and backward pass
    e.name = "based";
    e.description = "Based: the linear grid with the Taylor feature map [1, y, y(x)y/sqrt 2], y(x)y's unique entries";
    e.params = {choice_param("phi", {"taylor"}, "Based's second-order Taylor feature map"),
                real_param("scale", "1", "y = scale P x: the keys' norm a trained projection would set", 0.0, true)};
    // based:scale=best: from y at the key's norm (1 + c + c^2/2, dominated by its constant)
    // to a sharp kernel where the quadratic term dominates
    e.params[1].best = {"0.5", "1", "1.5", "2", "3", "4"};
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<LinearGrid>(s, "taylor", 1, rng, spec.real("scale"));
    };
    e.state_formula = "d_v x (1 + m + m(m+1)/2), m the largest with 1 + m + m(m+1)/2 <= floor(B / d_v); m = d_k without a budget";
    e.paper = "Arora et al. 2024 (Based)";
    // How the reports name it (memcap list --json).
    e.published = "Based";
    e.cost_growth = "O(n·B): Taylor features m(m+1)/2 + m + 1 wide, their grid B";
    e.table_name = "";  // not linear's: its own name
    e.plain_name = "";
    e.article = false;
    // zoology/mixers/based.py, Based.state_size: heads * head_dim * expanded + heads * expanded, with
    // zoology/mixers/feature_maps/taylor.py's TaylorExp.expanded_size = m(m+1)/2 + m + 1 (its
    // forward_mem_save keeps the lower triangle of x xᵀ, as memcap's taylor map does)
    e.zoology = ZoologyCount{"num_key_value_heads x (head_dim + 1) x (m(m+1)/2 + m + 1) (zoology/mixers/based.py, "
                             "feature_maps/taylor.py); one head, head_dim = d_v, feature_dim = m: memcap's + (m(m+1)/2 + m + 1) "
                             "(zoology also keeps the normaliser sum phi(k), memcap's unnormalised read does not)",
                             [](const MemorySize& size, const MemoryShape& s) {
                                 const std::int64_t m = size.dim("m");
                                 return (s.d_value + 1) * (m * (m + 1) / 2 + m + 1);
                             }};
    return e;
}

}  // namespace memcap
