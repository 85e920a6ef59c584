// memcap/memories/mesanet/entry.cpp — the mesanet backend's table entry (MesaMemory).
#include "memories/mesanet/mesa_memory.hpp"
#include "memories/registry.hpp"

namespace memcap {
namespace {

constexpr double kDouble = 8.0;
using I = std::int64_t;

MemorySize mesa_size(const Spec&, const MemoryShape& s) {
    const MesaMemory::Dims d = MesaMemory::size(s);
    MemorySize m;
    m.dims = {{"d_phi", d.phi.dim}};
    m.state_floats = d.state_floats();
    m.param_floats = d.phi.param_floats;
    m.build_scratch_bytes = d.phi.build_scratch_bytes;
    m.min_budget = d.min_budget;
    return m;
}

KernelCost mesa_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const MemorySize size = mesa_size(spec, s);
    const double d = double(size.dim("d_phi")), dv = s.d_value, b = double(batch);
    const double phi = 2.0 * double(size.param_floats) + 3.0 * d + 2.0;  // projection, normalisation
    KernelCost c;
    if (k == Kernel::write_batch) {
        c.flops = b * (phi + d * (d + 1.0) + 2.0 * dv * d + d);  // H's triangle += φ φᵀ, G += v φᵀ, the weights
        c.bytes = batch_bytes(s, batch) + kFloat * (double(size.param_floats) + 2.0 * double(size.state_floats));
        c.scratch_bytes = kFloat * (b * 2.0 * d + d * d);  // the features, and H's update before packing
    } else {
        // unpack and factor H + λI once (d³/3), then per query a solve (2 d²) and G y (2 d_v d)
        c.flops = d * d * d / 3.0 + 2.0 * d * d + b * (phi + 2.0 * d * d + 2.0 * dv * d);
        c.bytes = batch_bytes(s, batch) + kFloat * (double(size.param_floats) + double(size.state_floats));
        c.scratch_bytes = kDouble * (2.0 * d * d + 2.0 * b * d + dv * d) + kFloat * b * d;
    }
    return c;
}

std::optional<theory::RecallModel> mesa_recall(const Spec&, const MemorySize& size, const MemoryShape&,
                                               const theory::RecallTask& t) {
    if (auto m = theory::keyset_not_modelled(t, "least_squares_recall", false)) return m;
    theory::RecallModel m;
    m.model = "least_squares_recall";
    const std::int64_t d_phi = size.dim("d_phi");
    m.sizes = {{"d_phi", d_phi}};
    const std::int64_t rank = std::min<std::int64_t>(d_phi, t.d);
    if (t.noise_sigma > 0) {
        m.note = "query noise: no model of the ridge read of a noisy query";
    } else if (t.n > rank) {
        m.note = "n > min(d_phi, d) = " + std::to_string(rank) + ": no model of the ridge read of more pairs than key dimensions";
    } else {
        m.applies = "approx";
        m.note = "n <= min(d_phi, d): exact recall in the limit lambda -> 0";
        m.call = theory::least_squares_call(t.n, static_cast<int>(rank));
    }
    return m;
}

}  // namespace

MemoryEntry mesanet_entry() {
    MemoryEntry e;
    e.name = "mesanet";
    e.description = "MesaNet: the least-squares memory, keeps sum phi phi^T and sum v phi^T, reads G (H + lambda I)^-1 phi(q)";
    e.params = {real_param("lambda", "0.01", "ridge lambda added to H before the solve", 0.0, /*min_open=*/true),
                real_param("gamma", "1", "decay per write of both sums (1 = none)", 0.0, true, 1.0),
                choice_param("gate", {"salience", "none"},
                             "step from the task's declared salience feature (1 when none), or always 1")};
    e.params[0].best = {"0.001", "0.01", "0.1", "1", "10"};
    e.params[1].best = {"1", "0.999", "0.99"};
    e.state_formula = "d_phi(d_phi+1)/2 + d_v x d_phi (H symmetric: its lower triangle), d_phi the largest with d_phi(d_phi+1)/2 + d_v d_phi <= B; d_k without a budget";
    e.gates.log_decay = e.gates.write_gate = true;  // MesaMemory::write_gated
    e.paper = "von Oswald et al. 2025 (MesaNet)";
    e.size = mesa_size;
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<MesaMemory>(s, spec.real("lambda"), spec.real("gamma"), spec.text("gate") == "salience", rng);
    };
    e.cost = mesa_cost;
    e.order_free = true;  // with its default gamma = 1, H and G are sums over the pairs
    e.backward = true;    // MesaMemory::backward
    e.recall_model = mesa_recall;
    // How the reports name it (memcap list --json).
    e.published = "MesaNet";
    e.cost_growth = "O(n·B) writes; a read solves in H (d_φ², with d_φ² ≈ B): O(q·B^1.5)";
    return e;
}

}  // namespace memcap
