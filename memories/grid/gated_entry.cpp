// memcap/memories/grid/gated_entry.cpp — see gated_entry.hpp.
#include "memories/grid/gated_entry.hpp"

namespace memcap {

ParamInfo decay_param(const std::string& key, const std::string& def, const std::string& help,
                      std::vector<std::string> best) {
    ParamInfo p = real_param(key, def, help, 0.0, /*min_open=*/true, 1.0);
    p.best = std::move(best);
    return p;
}

std::vector<std::string> channel_decay_candidates() { return {"1", "0.99", "0.97", "0.9", "0.7", "0.5"}; }

ParamInfo strength_param(const std::string& key, const std::string& def, const std::string& help, double max) {
    ParamInfo p = real_param(key, def, help, 0.0, /*min_open=*/true, max);
    // as delta:beta=best, in 1-2-5 steps down to 0.01 (the values above max left out)
    for (const char* v : {"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "1.5"})
        if (std::stod(v) <= max) p.best.emplace_back(v);
    return p;
}

ParamInfo gate_param() {
    return choice_param("gate", {"salience", "none"},
                        "gates from the task's declared salience feature (none declared: the raced constants), or never");
}

ParamInfo step_rule_param() {
    return choice_param("step", {"plain", "longhorn"}, "write strength beta, or Longhorn's beta/(1+beta|phi|^2)");
}

namespace {

using I = std::int64_t;

}  // namespace

MemoryEntry gated_grid_entry(std::function<GatedGrid::Rule(const Spec&)> rule) {
    MemoryEntry e;
    e.size = grid_size;
    e.make = [rule](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<GatedGrid>(s, rule(spec), spec.text("phi"), grid_nu(spec), rng);
    };
    e.cost = [rule](const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
        const GatedGrid::Rule r = rule(spec);
        const double d_phi = grid_dims(spec, s).phi.dim, d_v = s.d_value;
        double extra = 0.0;
        if (k == Kernel::write_batch) {
            // one pair at a time: the decay (d_v d_phi, when there is one), the delta forms'
            // read S e (2 d_v d_phi) and their normalisation (3 d_phi + 2), the gate (2 d_v + 4)
            // and the error (2 d_v); the rank-1 update is grid_cost's GEMM term
            if (r.alpha != 1.0) extra += d_v * d_phi + (r.per_channel ? d_phi : 0.0);
            if (r.delta()) extra += 2.0 * d_v * d_phi + 3.0 * d_phi + 2.0 + 2.0 * d_v;
            if (r.gated && s.salience_feature) extra += 2.0 * d_v + 4.0;
        } else if (r.delta()) {
            extra += 3.0 * d_phi + 2.0;  // normalising φ(q)
        }
        return grid_cost(spec, s, k, batch, extra);
    };
    // The additive forms at decay 1 are the linear grid (its crosstalk model); a decay weights
    // the crosstalk by a^lag, and the delta forms edit it: no model of either here.
    e.recall_model = [rule](const Spec& spec, const MemorySize& size, const MemoryShape& shape,
                            const theory::RecallTask& t) -> std::optional<theory::RecallModel> {
        const GatedGrid::Rule r = rule(spec);
        if (!r.delta() && r.alpha == 1.0) return find_memory("linear").recall_model(spec, size, shape, t);
        theory::RecallModel m;
        m.model = r.delta() ? "gated_delta_recall" : "grid_recall";
        m.note = r.delta() ? "delta-rule writes: no model of the edited crosstalk"
                           : "decay < 1: no model of the decay-weighted crosstalk";
        m.sizes = {{"d_phi", size.dim("d_phi")}};
        return m;
    };
    // A recent pair of a long stream: the decayed grid's model for one scalar decay and additive
    // writes (RetNet; forgetting.hpp); none for per-channel decays, delta writes or gates.
    e.horizon_model = [rule](const Spec& spec, const MemorySize& size, const MemoryShape&,
                             const theory::LagBucket& b) -> std::optional<theory::RecallModel> {
        const GatedGrid::Rule r = rule(spec);
        if (r.delta() || r.per_channel || r.gated) return std::nullopt;
        return theory::decayed_grid_model(r.alpha, size.dim("d_phi"), b);
    };
    e.splits_into_heads = true;  // heads=h (memories/heads.hpp)
    e.order_free = false;  // a decay or an edit makes the state depend on the order of writes
    e.backward = true;     // GatedGrid::write_backward
    e.causal_backward = true;  // OuterProductGrid::causal_backward, with every gate input the family takes
    return e;
}

}  // namespace memcap
