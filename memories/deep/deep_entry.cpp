// memcap/memories/deep/deep_entry.cpp — see deep_entry.hpp.
#include "memories/deep/deep_entry.hpp"

#include <algorithm>

namespace memcap {

namespace {
}

OnlineMlp::Dims deep_dims(const Spec& spec, const MemoryShape& s, const DeepShape& shape) {
    return OnlineMlp::size(s, shape.depth, shape.momentum, static_cast<int>(spec.integer("batch")));
}

MemorySize deep_size(const Spec& spec, const MemoryShape& s, const DeepShape& shape) {
    const OnlineMlp::Dims d = deep_dims(spec, s, shape);
    MemorySize m;
    if (d.depth == 1) m.dims = {{"d_phi", d.d_in()}};
    else m.dims = {{"hidden", d.hidden}, {"depth", d.depth}};
    if (d.pending > 0) m.dims.emplace_back("pending", d.pending);
    m.state_floats = d.state_floats();
    m.param_floats = d.weight_floats() * (d.depth > 1 ? 1 : 0) + d.phi.param_floats;  // W⁰ (0 at depth 1) and φ
    m.build_scratch_bytes = d.phi.build_scratch_bytes;
    m.min_budget = d.min_budget();
    return m;
}

KernelCost deep_cost(const Spec& spec, const MemoryShape& s, const DeepShape& shape, Kernel k, std::int64_t batch) {
    const OnlineMlp::Dims d = deep_dims(spec, s, shape);
    const double b = static_cast<double>(batch), w = static_cast<double>(d.weight_floats());
    const double acts = static_cast<double>(d.hidden) * (d.depth - 1) + static_cast<double>(d.d_in() + d.d_key + d.d_value);
    KernelCost c;
    if (k == Kernel::write_batch) {
        c.flops = b * d.write_flops() * static_cast<double>(spec.integer("steps"));
        c.bytes = batch_bytes(s, batch) + kFloat * (w + 2.0 * static_cast<double>(d.state_floats()));
        c.scratch_bytes = kFloat * static_cast<double>(std::min<std::int64_t>(batch, spec.integer("batch"))) * 3.0 * acts +
                          (d.momentum ? 2.0 : 0.0) * kFloat * w;
    } else {
        c.flops = b * d.forward_flops();
        c.bytes = batch_bytes(s, batch) + kFloat * (w + static_cast<double>(d.phi.param_floats));
        c.scratch_bytes = kFloat * b * 2.0 * acts;
    }
    return c;
}

OnlineMlp::Settings deep_settings(const Spec& spec) {
    OnlineMlp::Settings st;
    st.lr = spec.real("lr");
    st.steps = static_cast<int>(spec.integer("steps"));
    st.batch = static_cast<int>(spec.integer("batch"));
    if (spec.has("momentum")) st.momentum = spec.real("momentum");
    if (spec.has("forget")) st.forget = spec.real("forget");
    return st;
}

std::vector<ParamInfo> deep_params(const std::string& default_lr) {
    std::vector<ParamInfo> p = {
        real_param("lr", default_lr, "inner learning rate: theta_t = lr / |a_t|^2, a_t the last layer's input", 0.0, true, 1.0),
        int_param("batch", "1", "mini-batch size b: gradients of a batch are taken at its first weights", 1, 1024),
        int_param("steps", "1", "gradient steps per mini-batch", 1, 64)};
    p[0].best = {"0.02", "0.05", "0.1", "0.25", "0.5"};
    p[1].best = {"1", "4", "16"};
    p[2].best = {"1", "2", "4"};
    return p;
}

}  // namespace memcap
