// memcap/memories/mlstm/entry.cpp — mLSTM, xLSTM's matrix memory (Mlstm, mlstm.hpp).
//
// Stores:       C, d_v × d_φ; the normaliser n, d_φ; the stabiliser m, 1.
// Write:        C ← f C + i v φ(k)ᵀ, n ← f n + i φ(k), i = e^ĩ, in the stabilised form
//               (Beck et al. 2024, eqs. 19–27 and appendix; the paper's C is d_v × d_k, read C q).
// Read:         C φ(q) / max(|nᵀφ(q)|, 1) (stabilised: max(|ñᵀφ(q)|, e^{−m})).
// state_floats: d_v·d_φ + d_φ + 1, d_φ = floor((B − 1) / (d_v + 1)); the paper: d_k·d_v + d_k (+1).
// Parameters:   forget = 1 (f ∈ (0, 1]; forget=best races 1, 0.999, 0.99, 0.97, 0.9), input = 0
//               (ĩ, the input gate's pre-activation: i = e^ĩ scales C and n alike, so it moves
//               only where the normaliser's floor of 1 binds). Untrained, the gates are these
//               constants; per token they are TokenGates' log_decay (log f_t) and beta (i_t).
// Source:       Beck, Pöppel, Spanring, Auer, Prudnikova, Kopp, Klambauer, Brandstetter &
//               Hochreiter 2024, "xLSTM: Extended Long Short-Term Memory" (NeurIPS).
#include "memories/grid/gated_entry.hpp"
#include "memories/mlstm/mlstm.hpp"

namespace memcap {

namespace {

using I = std::int64_t;

MemorySize mlstm_size(const Spec&, const MemoryShape& s) {
    const FeatureMap::Dims phi = FeatureMap::size("proj", s.d_key, std::max<I>(1, Mlstm::feature_budget(s)), 1);
    MemorySize m;
    m.dims = {{"d_phi", phi.dim}};
    m.state_floats = I{s.d_value} * phi.dim + phi.dim + 1;
    m.param_floats = phi.param_floats;
    m.build_scratch_bytes = phi.build_scratch_bytes;
    m.min_budget = I{s.d_value} + 2;  // d_φ = 1
    return m;
}

KernelCost mlstm_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const MemorySize size = mlstm_size(spec, s);
    const double d_phi = double(size.dim("d_phi")), b = double(batch);
    KernelCost c;
    // φ (2 per projection parameter), then the grid's outer product or product and the normaliser
    c.flops = b * (2.0 * double(size.param_floats) + 2.0 * s.d_value * d_phi + 4.0 * d_phi);
    c.bytes = batch_bytes(s, batch) +
              kFloat * (double(size.param_floats) + (k == Kernel::write_batch ? 2.0 : 1.0) * double(size.state_floats));
    c.scratch_bytes = kFloat * 2.0 * d_phi;
    return c;
}

}  // namespace

MemoryEntry mlstm_entry() {
    MemoryEntry e;
    e.name = "mlstm";
    e.description = "mLSTM (xLSTM): C <- f C + i v phi^T, n <- f n + i phi, read C q / max(|n.q|, 1), stabilised exp input gate";
    e.params = {decay_param("forget", "1", "forget gate f per write (1 = none)", {"1", "0.999", "0.99", "0.97", "0.9"}),
                real_param("input", "0", "input gate pre-activation: i = exp(input)", -20.0, false, 20.0)};
    e.state_formula = "d_v x d_phi + d_phi + 1 (C, the normaliser n, the stabiliser m), d_phi = floor((B - 1) / (d_v + 1)); "
                      "d_k without a budget";
    e.paper = "Beck et al. 2024 (xLSTM)";
    e.size = mlstm_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<Mlstm>(s, spec.real("forget"), spec.real("input"), rng);
    };
    e.cost = mlstm_cost;
    e.order_free = true;  // at the defaults (f = i = 1) C and n are sums
    e.gates = GateInputs{true, false, true, false};  // log_decay (log f_t), beta (i_t)
    // How the reports name it (memcap list --json).
    e.published = "mLSTM";
    e.cost_growth = "O(n·B): the linear grid's write and its normaliser";
    e.reduces_to = "linear";
    e.reduces_when = "forget=1,input=0";  // C is the linear grid's M; reads divided by max(|n.q|, 1)
    return e;
}

}  // namespace memcap
