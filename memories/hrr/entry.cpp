// memcap/memories/hrr/entry.cpp — the hrr backend's table entry (Hrr).
#include "memories/hrr/hrr.hpp"
#include "memories/registry.hpp"

#include <algorithm>

namespace memcap {
namespace {

using I = std::int64_t;

MemorySize hrr_size(const Spec&, const MemoryShape& s) {
    const Hrr::Dims h = Hrr::size(s);
    MemorySize m;
    m.dims = {{"D", h.dim}};
    m.state_floats = h.dim;
    m.param_floats = h.param_floats();
    m.derived_floats = h.derived_floats();
    m.min_budget = 1;
    return m;
}

KernelCost hrr_cost(const Spec&, const MemoryShape& s, Kernel k, I, I batch) {
    // The batch takes the cheaper of its per-item and factored forms (hrr.hpp); so does the model.
    const Hrr::Dims h = Hrr::size(s);
    const double dim = h.dim, b = double(batch), bins = h.bins();
    const double key_map = h.key_map ? dim * s.d_key : 0.0, value_map = h.value_map ? dim * s.d_value : 0.0;
    const auto flops = k == Kernel::write_batch ? Hrr::write_flops : Hrr::read_flops;
    const double per_item = h.kept && k == Kernel::read_batch ? Hrr::kept_read_flops(dim, s.d_value, b, h.value_map)
                                                               : flops(dim, s.d_key, s.d_value, b, false);
    const double factored = flops(dim, s.d_key, s.d_value, b, true);
    KernelCost c;
    c.flops = std::min(per_item, factored);
    if (h.kept && k == Kernel::write_batch) {  // the rows' spectra kept (Hrr::write_kept): the cost once they are
        c.flops = Hrr::kept_write_flops(dim, b);
        c.bytes = batch_bytes(s, batch) + kFloat * 2.0 * dim + 2.0 * 8.0 * bins * std::min(b, double(h.kept_rows()));
        // the kept spectra of both sides (at most kept_rows each), their index, a row mapped, the sum
        c.scratch_bytes = 2.0 * double(h.kept_rows()) * (8.0 * bins + 80.0 + kFloat * std::max(s.d_key, s.d_value)) +
                          kFloat * dim + 3.0 * 8.0 * bins;
        return c;
    }
    c.bytes = batch_bytes(s, batch) + kFloat * ((k == Kernel::write_batch ? 2.0 : 1.0) * dim + key_map + value_map);
    // Temporaries of the form the batch takes (the factored one needs the kept spectra).
    const double dk = s.d_key, dv = s.d_value;
    if (h.spectra && factored < per_item) {
        if (k == Kernel::write_batch)  // G = Kᵀ V, A G (Re, Im), the summed spectrum
            c.scratch_bytes = kFloat * (dk * dv + 2.0 * bins * dv + 2.0 * bins);
        else  // Z (Re, Im) and Wᵀ; or, without a value map, Y (d_k × D)
            c.scratch_bytes = kFloat * ((h.value_map ? 2.0 * bins * dk : dk * dim) + dk * dv);
    } else {  // the rows mapped in (none where D = d: they enter as they are): keys and values, or
              // queries and the D-float reads (queries' spectra kept: the reads alone)
        const double key_row = h.key_map && !h.kept ? dim : 0.0;
        c.scratch_bytes = kFloat * b * (key_row + (k == Kernel::write_batch ? (h.value_map ? dim : 0.0) : dim));
    }
    return c;
}

// HRR at its natural size, D = d with no maps, is the model of memories/theory/hrr.hpp.
std::optional<theory::RecallModel> hrr_recall(const Spec&, const MemorySize& size, const MemoryShape&,
                                              const theory::RecallTask& t) {
    if (auto m = theory::keyset_not_modelled(t, "hrr_recall", false)) return m;
    theory::RecallModel m;
    m.model = "hrr_recall";
    const std::int64_t D = size.dim("D");
    m.sizes = {{"D", D}};
    if (D != t.d) {
        m.note = "trace D = " + std::to_string(D) + " != d: keys and values enter through random maps";
    } else if (t.d < 2) {
        m.note = "D < 2";
    } else if (t.noise_sigma > 0) {
        m.applies = "approx", m.note = "query noise added to the model as crosstalk (n + 1)/D, target at the cosine";
        m.call = theory::hrr_call(t.n, D, t.noise_sigma);
    } else {
        m.applies = "exact", m.call = theory::hrr_call(t.n, D, 0);
    }
    return m;
}

}  // namespace

MemoryEntry hrr_entry() {
    MemoryEntry e;
    e.name = "hrr";
    e.description = "holographic reduced representation: circular convolution, unbind by correlation";
    e.state_formula = "D = B (d without a budget)";
    e.paper = "Plate 1995";
    e.size = hrr_size;
    e.make = [](const Spec&, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<Hrr>(s, rng);
    };
    e.cost = hrr_cost;  // also decides the width race: ties go to the cheapest, dominated candidates are pruned
    e.order_free = true;  // T = sum of k (*) v
    e.backward = true;    // through the FFTs (Hrr::backward)
    e.takes_spectra = [](const Spec&, const MemoryShape& s) {  // no maps: D = d (Hrr::takes_spectra)
        const Hrr::Dims h = Hrr::size(s);
        return !h.key_map && !h.value_map;
    };
    e.recall_model = hrr_recall;
    // How the reports name it (memcap list --json).
    e.published = "HRR";  // Plate 1995: holographic reduced representations
    e.cost_growth = "O(n·B log B): one FFT of the B-wide trace per write, plus the d × B maps";
    e.plain_name = "HRR";
    return e;
}

}  // namespace memcap
