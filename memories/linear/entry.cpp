// memcap/memories/linear/entry.cpp — the linear backend's table entry (LinearGrid).
#include "memories/linear/linear_grid.hpp"
#include "memories/grid/grid_entry.hpp"

namespace memcap {
namespace {

using I = std::int64_t;

KernelCost linear_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    return grid_cost(spec, s, k, batch, 0.0);
}

// The grid with φ the identity (d_φ = d), or an orthonormal projection (d_φ > d, which keeps
// k·q), is the crosstalk model's grid (memories/theory/crosstalk.hpp); over a tight frame of
// keys, the keyset model (memories/theory/keysets.hpp).
std::optional<theory::RecallModel> linear_recall(const Spec& spec, const MemorySize& size, const MemoryShape&,
                                                 const theory::RecallTask& t) {
    if (auto m = theory::keyset_not_modelled(t, "grid_recall", true)) return m;
    theory::RecallModel m;
    const std::int64_t d_phi = size.dim("d_phi");
    m.sizes = {{"d_phi", d_phi}};
    const std::string& phi = spec.text("phi");
    if (t.keys == "frame") {
        m.model = "keyset_grid_recall";
        if (phi != "proj" || d_phi < t.d || t.n < 2) {
            m.note = "keys=frame: the keyset model is of the linear grid with d_phi >= d (proj), n >= 2";
        } else {
            m.applies = "approx";
            m.note = "Gaussian crosstalk of n of a tight frame of V = " + std::to_string(t.vocab) + " (theory.hpp section 4)";
            m.call = theory::frame_call(t.n, t.d, t.vocab, t.noise_sigma);
        }
        return m;
    }
    m.model = "grid_recall";
    if (t.d < 4) {
        m.note = "d < 4";
    } else if (phi != "proj") {
        m.note = "phi=" + phi + " features: not the model's linear grid";
    } else if (d_phi == t.d) {
        m.applies = "exact", m.call = theory::grid_call(t.n, t.d, t.noise_sigma);
    } else if (d_phi > t.d) {
        m.applies = "equivalent", m.note = "d_phi = " + std::to_string(d_phi) + " > d: orthonormal projection keeps k.q";
        m.call = theory::grid_call(t.n, t.d, t.noise_sigma);
    } else {
        m.note = "d_phi = " + std::to_string(d_phi) + " < d: Johnson-Lindenstrauss projection";
    }
    return m;
}

}  // namespace

MemoryEntry linear_entry() {
    MemoryEntry e;
    e.name = "linear";
    e.description = "linear-attention / fast-weight outer-product grid";
    e.params = {grid_phi_param(), grid_nu_param()};
    e.state_formula = "d_v x d_phi, d_phi = floor(B / d_v) (dpfp: rounded down to a multiple of 2 nu); d_k without a budget";
    e.splits_into_heads = true;  // heads=h (memories/heads.hpp)
    e.paper = "Katharopoulos et al. 2020; Schlag, Irie & Schmidhuber 2021";
    // zoology/mixers/based.py, Based.state_size with a plain feature map (zoology/mixers/feature_maps/
    // base.py: expanded_size = input_dim): heads * head_dim * expanded + heads * expanded, the
    // numerator's grid and the normaliser sum phi(k); memcap's linear grid reads M phi(q) unnormalised
    e.zoology = ZoologyCount{"num_key_value_heads x (head_dim + 1) x expanded_size (zoology/mixers/based.py, a plain feature map: "
                             "expanded_size = feature_dim); one head, head_dim = d_v, expanded_size = d_phi: memcap's + d_phi "
                             "(zoology also keeps the normaliser sum phi(k), memcap's unnormalised read does not)",
                             [](const MemorySize& size, const MemoryShape& s) { return (s.d_value + 1) * size.dim("d_phi"); }};
    e.size = grid_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<LinearGrid>(s, spec.text("phi"), grid_nu(spec), rng);
    };
    e.cost = linear_cost;  // also decides the width race: ties go to the cheapest, dominated candidates are pruned
    e.order_free = true;  // M = sum of v phi(k)^T
    e.backward = true;    // OuterProductGrid::backward
    e.causal_backward = true;  // OuterProductGrid::causal_backward (the trained frame)
    e.recall_model = linear_recall;
    // on a recent pair of a long stream: the decayed grid's model at decay 1 (forgetting.hpp)
    e.horizon_model = [](const Spec&, const MemorySize& size, const MemoryShape&, const theory::LagBucket& b) {
        return std::optional<theory::RecallModel>(theory::decayed_grid_model(1.0, size.dim("d_phi"), b));
    };
    // How the reports name it (memcap list --json).
    e.published = "linear attention";
    e.cost_growth = "O(n·B): each write adds a d_φ × d_v outer product, d_φ·d_v = B";
    e.table_name = "linear attention (grid)";
    e.plain_name = "linear grid";
    e.article = true;
    return e;
}

}  // namespace memcap
