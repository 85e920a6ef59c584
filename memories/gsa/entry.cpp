// memcap/memories/gsa/entry.cpp — the gsa backend's table entry (GatedSlots).
#include "memories/gsa/gsa.hpp"
#include "memories/registry.hpp"

#include <limits>

namespace memcap {
namespace {

using I = std::int64_t;

MemorySize gsa_size(const Spec&, const MemoryShape& s) {
    const I m = GatedSlots::slots(s), row = I{s.d_key} + s.d_value;
    MemorySize out;
    out.dims = {{"slots", m}};
    out.state_floats = m * row;
    out.param_floats = m * s.d_key;  // the router's directions
    out.min_budget = row;
    return out;
}

KernelCost gsa_cost(const Spec&, const MemoryShape& s, Kernel k, I, I batch) {
    const double m = double(GatedSlots::slots(s)), dk = s.d_key, dv = s.d_value, b = double(batch);
    KernelCost c;
    if (k == Kernel::write_batch) {  // route (2 m d_k, a sort), then every slot's blend (3 (d_k + d_v) a slot)
        c.flops = b * (2.0 * m * dk + m * std::log2(m + 1.0) + 3.0 * m * (dk + dv));
        c.bytes = batch_bytes(s, batch) + kFloat * (2.0 * m * (dk + dv) + m * dk);
        c.scratch_bytes = kFloat * 2.0 * m;
    } else {  // scores (2 m d_k), softmax (≈ 5 m), the weighted sum (2 m d_v)
        c.flops = b * m * (2.0 * dk + 5.0 + 2.0 * dv);
        c.bytes = batch_bytes(s, batch) + kFloat * m * (dk + dv);
        c.scratch_bytes = kFloat * 2.0 * m;
    }
    return c;
}

}  // namespace

MemoryEntry gsa_entry() {
    MemoryEntry e;
    e.name = "gsa";
    e.description = "Gated Slot Attention: m slots read by softmax, written through a gate routed by a fixed random map";
    ParamInfo beta = real_param("beta", "16", "read sharpness on raw dot products with the slots' keys (inf: the nearest slot)", 0.0);
    beta.allow_inf = true;
    beta.best = {"1", "4", "16", "64", "256", "inf"};
    ParamInfo write = real_param("write", "1", "write strength g: 1 - alpha_t = g r_t (1: a routed slot takes the pair)", 0.0, true, 1.0);
    write.best = {"1", "0.5", "0.2", "0.1"};
    ParamInfo temp = real_param("temp", "inf", "router sharpness tau: r_t = softmax(tau R k_t) (inf: the nearest slot alone, a hash)", 0.0, true);
    temp.allow_inf = true;
    temp.best = {"inf", "64", "16", "4"};
    ParamInfo topk = optional_param(int_param("topk", "", "route to the k slots of largest weight only (Raven's routed writes); none: every slot", 1, 1 << 20));
    topk.best = {"1", "2", "4"};
    e.params = {beta, write, temp, topk};
    e.state_formula = "m x (d_k + d_v), m = floor(B / (d_k + d_v)) slots (d_k without a budget)";
    e.paper = "Zhang, Yang et al. 2024 (Gated Slot Attention); Peng et al. 2022 (ABC)";
    e.size = gsa_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<GatedSlots>(s, spec.real("beta"), spec.real("write"), spec.real("temp"),
                                            spec.has("topk") ? static_cast<int>(spec.integer("topk")) : 0, rng);
    };
    e.cost = gsa_cost;
    e.published = "Gated Slot Attention";
    e.table_name = "Gated Slot Attention (untrained router)";
    return e;
}

}  // namespace memcap
