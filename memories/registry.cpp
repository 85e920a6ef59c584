// memcap/memories/registry.cpp — the one table of memory backends.
//
// Adding a backend: write memories/<name>.hpp/.cpp, add one entry below (with
// its FLOP-and-byte model, see KernelCost), add a row to memories/README.md. `memcap list`, the conformance tests and the
// benchmarks pick it up from this table.
#include "memories/registry.hpp"

#include "core/error.hpp"
#include "memories/delta_grid.hpp"
#include "memories/hrr.hpp"
#include "memories/linear_grid.hpp"
#include "memories/rotation_rnn.hpp"
#include "memories/selective_state.hpp"
#include "memories/softmax_cache.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace memcap {
namespace {

const ParamInfo phi_param = choice_param("phi", {"proj", "dpfp"}, "feature map when d_phi != d_k (identity otherwise)");
const ParamInfo nu_param = int_param("nu", "1", "DPFP order (phi=dpfp)", 1, 8);

std::int64_t grid_min_budget(const Spec& spec, const MemoryShape& s) {
    return FeatureMap::min_dim(spec.text("phi"), static_cast<int>(spec.integer("nu"))) * s.d_value;
}

// ---- FLOP-and-byte models (bench/, PERFORMANCE.md). f = 4 bytes per float. ----
constexpr double kFloat = 4.0;
using I = std::int64_t;

// Bytes every batched call moves: the batch in (keys and values, or queries)
// and, for a read, the reads out.
double batch_bytes(const MemoryShape& s, I batch) { return kFloat * double(batch) * (s.d_key + s.d_value); }

// The grid memories' feature map: d_phi, its parameter floats, and its FLOPs per row.
struct GridDims {
    double d_phi, params, phi_flops_per_row;
};
GridDims grid_dims(const Spec& spec, const MemoryShape& s) {
    const I max_dim = OuterProductGrid::feature_budget(s);
    const bool dpfp = spec.text("phi") == "dpfp";
    const I nu = spec.integer("nu");
    const I m = dpfp ? max_dim / (2 * nu) : max_dim;
    const double proj = (m == s.d_key) ? 0.0 : double(m) * s.d_key;  // the projection's floats
    GridDims g{double(dpfp ? 2 * nu * m : m), proj, 2.0 * proj};
    if (dpfp) g.phi_flops_per_row += 2.0 * m + 2.0 * m * nu;  // relus, products
    return g;
}

// Σ v φ(k)ᵀ grids (linear, selective): a write is one GEMM, a read is one GEMM.
KernelCost grid_cost(const Spec& spec, const MemoryShape& s, Kernel k, I batch, double extra_per_row) {
    const GridDims g = grid_dims(spec, s);
    const double state = s.d_value * g.d_phi, b = double(batch);
    KernelCost c;
    c.flops = b * (g.phi_flops_per_row + extra_per_row + 2.0 * s.d_value * g.d_phi);
    c.bytes = batch_bytes(s, batch) + kFloat * (g.params + (k == Kernel::write_batch ? 2.0 : 1.0) * state);
    return c;
}

KernelCost softmax_cost(const Spec&, const MemoryShape& s, Kernel k, I stored, I batch) {
    const I capacity = s.budget_floats ? *s.budget_floats / (s.d_key + s.d_value) : -1;
    KernelCost c;
    if (k == Kernel::write_batch) {  // copies: the pairs in, the same floats into the cache
        c.bytes = 2.0 * batch_bytes(s, batch);
        return c;
    }
    const double m = double(capacity < 0 ? stored : std::min(stored, capacity));
    // scores K q (2 d_k), max, subtract-scale, exp, sum, divide (≈ 5), weighted sum of V (2 d_v)
    c.flops = double(batch) * m * (2.0 * s.d_key + 5.0 + 2.0 * s.d_value);
    c.bytes = batch_bytes(s, batch) + kFloat * m * (s.d_key + s.d_value);
    return c;
}

KernelCost linear_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    return grid_cost(spec, s, k, batch, 0.0);
}

KernelCost delta_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const GridDims g = grid_dims(spec, s);
    // normalising φ: 2 d_phi + 1 (+ sqrt, divide); a write also does err = v − M φ (2 d_v d_phi + d_v)
    // and M += (β err) φᵀ (2 d_v d_phi + d_v): a rank-1 update chain, two passes over M per item.
    const double extra = 3.0 * g.d_phi + 2.0 + (k == Kernel::write_batch ? 2.0 * s.d_value * g.d_phi + 2.0 * s.d_value : 0.0);
    return grid_cost(spec, s, k, batch, extra);
}

KernelCost selective_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const GridDims g = grid_dims(spec, s);
    // a write also computes the gate (2 d_v + 4; only with gate=salience and a declared
    // salience feature, else Δ = 1) and scales φ's row by its weight (d_phi)
    const double gate = spec.text("gate") == "salience" && s.salience_feature ? 2.0 * s.d_value + 4.0 : 0.0;
    return grid_cost(spec, s, k, batch, k == Kernel::write_batch ? gate + g.d_phi : 0.0);
}

KernelCost hrr_cost(const Spec&, const MemoryShape& s, Kernel k, I, I batch) {
    // The batch takes the cheaper of its per-item and factored forms (hrr.hpp); so does the model.
    const double dim = double(s.budget_floats.value_or(s.d_key)), b = double(batch);
    const double key_map = dim == s.d_key ? 0.0 : dim * s.d_key, value_map = dim == s.d_value ? 0.0 : dim * s.d_value;
    const auto flops = k == Kernel::write_batch ? Hrr::write_flops : Hrr::read_flops;
    KernelCost c;
    c.flops = std::min(flops(dim, s.d_key, s.d_value, b, false), flops(dim, s.d_key, s.d_value, b, true));
    c.bytes = batch_bytes(s, batch) + kFloat * ((k == Kernel::write_batch ? 2.0 : 1.0) * dim + key_map + value_map);
    return c;
}

KernelCost rotation_cost(const Spec&, const MemoryShape& s, Kernel k, I, I batch) {
    const double dim = double(s.budget_floats.value_or(s.d_value)), b = double(batch);
    const double d_in = s.positional_keys ? s.d_value : s.d_key + s.d_value;
    const double map = dim == d_in ? 0.0 : dim * d_in;
    KernelCost c;
    c.bytes = batch_bytes(s, batch) + kFloat * ((k == Kernel::write_batch ? 2.0 : 1.0) * dim + map);
    if (k == Kernel::write_batch)  // U x (one GEMM), then per step 5 FLOPs per state float (2 × 2 rotation, decay, add)
        c.flops = b * (2.0 * map + 5.0 * dim);
    else  // read() decodes U_vᵀ s per query (the native read ignores the query)
        c.flops = b * 2.0 * dim * s.d_value;
    return c;
}

std::vector<MemoryEntry> build_registry() {
    std::vector<MemoryEntry> table;
    {
        MemoryEntry e;
        e.name = "softmax";
        e.description = "softmax attention over a FIFO key-value cache";
        e.params = {real_param("beta", "16", "sharpness on raw dot products (0 = uniform attention)", 0.0)};
        e.state_formula = "(stored pairs) x (d_k + d_v), at most floor(B / (d_k + d_v)) pairs; unbounded without a budget";
        e.paper = "Bahdanau et al. 2014; Vaswani et al. 2017";
        e.min_budget = [](const Spec&, const MemoryShape& s) { return std::int64_t{s.d_key + s.d_value}; };
        e.make = [](const Spec& spec, const MemoryShape& s, Rng&) -> std::unique_ptr<Memory> {
            return std::make_unique<SoftmaxCache>(s, spec.real("beta"));
        };
        e.cost = softmax_cost;
        e.order_free = true;      // unbounded without a budget: never evicts, and attention is a sum over pairs
        e.can_hide_pairs = true;  // one row per pair: a read can give one of them weight 0
        table.push_back(std::move(e));
    }
    {
        MemoryEntry e;
        e.name = "linear";
        e.description = "linear-attention / fast-weight outer-product grid";
        e.params = {phi_param, nu_param};
        e.state_formula = "d_v x d_phi, d_phi = floor(B / d_v) (dpfp: rounded down to a multiple of 2 nu); d_k without a budget";
        e.paper = "Katharopoulos et al. 2020; Schlag, Irie & Schmidhuber 2021";
        e.min_budget = grid_min_budget;
        e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
            return std::make_unique<LinearGrid>(s, spec.text("phi"), static_cast<int>(spec.integer("nu")), rng);
        };
        e.cost = linear_cost;
        e.order_free = true;  // M = sum of v phi(k)^T
        table.push_back(std::move(e));
    }
    {
        MemoryEntry e;
        e.name = "delta";
        e.description = "delta-rule outer-product grid (fast weights that edit)";
        e.params = {real_param("beta", "1", "write strength beta_w", 0.0, true, 2.0), phi_param, nu_param};
        e.state_formula = "d_v x d_phi, as linear";
        e.paper = "Schlag, Irie & Schmidhuber 2021";
        e.min_budget = grid_min_budget;
        e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
            return std::make_unique<DeltaGrid>(s, spec.real("beta"), spec.text("phi"),
                                               static_cast<int>(spec.integer("nu")), rng);
        };
        e.cost = delta_cost;
        e.order_free = false;  // each write edits what the previous ones left
        table.push_back(std::move(e));
    }
    {
        MemoryEntry e;
        e.name = "hrr";
        e.description = "holographic reduced representation: circular convolution, unbind by correlation";
        e.state_formula = "D = B (d without a budget)";
        e.paper = "Plate 1995";
        e.min_budget = [](const Spec&, const MemoryShape&) { return std::int64_t{1}; };
        e.make = [](const Spec&, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
            return std::make_unique<Hrr>(s, rng);
        };
        e.cost = hrr_cost;
        e.order_free = true;  // T = sum of k (*) v
        table.push_back(std::move(e));
    }
    {
        MemoryEntry e;
        e.name = "rotation";
        e.description = "decaying rotation RNN s <- rho R s + U x, read by a least-squares probe";
        e.params = {real_param("rho", "0.9", "decay per step", 0.0, false, 1.0, true),
                    choice_param("angles", {"uniform", "haar"},
                                 "rotation angles: i.i.d. uniform, or those of a Haar R (D <= 2048)")};
        e.state_formula = "D = B (d without a budget)";
        e.paper = "essay 004 Part 1";
        e.min_budget = [](const Spec&, const MemoryShape&) { return std::int64_t{1}; };
        e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
            return std::make_unique<RotationRnn>(s, spec.real("rho"), spec.text("angles"), rng);
        };
        e.cost = rotation_cost;
        e.native_read = false;  // read() ignores the query: scored through the probe
        e.order_free = false;   // each step rotates and decays what came before
        table.push_back(std::move(e));
    }
    {
        MemoryEntry e;
        e.name = "selective";
        e.description = "selective state model S <- a(x) S + b(x) v phi(k)^T, input-dependent step (Mamba)";
        e.params = {real_param("rho", "1", "decay per full step (1 = none)", 0.0, true, 1.0),
                    choice_param("gate", {"salience", "none"},
                                 "step from the task's declared salience feature (1 when none), or always 1"),
                    phi_param, nu_param};
        e.state_formula = "d_v x d_phi, as linear";
        e.paper = "Gu & Dao 2023 (Mamba); Dao & Gu 2024";
        e.min_budget = grid_min_budget;
        e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
            return std::make_unique<SelectiveState>(s, spec.real("rho"), spec.text("gate") == "salience",
                                                    spec.text("phi"), static_cast<int>(spec.integer("nu")), rng);
        };
        e.cost = selective_cost;
        e.order_free = true;  // with its default rho = 1 no write decays another: a weighted sum of v phi(k)^T
        table.push_back(std::move(e));
    }
    return table;
}

}  // namespace

const std::vector<MemoryEntry>& memory_registry() {
    static const std::vector<MemoryEntry> registry = build_registry();
    return registry;
}

std::vector<std::string> memory_names() {
    std::vector<std::string> names;
    for (const auto& e : memory_registry()) names.push_back(e.name);
    return names;
}

const MemoryEntry& find_memory(const std::string& name) {
    for (const auto& e : memory_registry())
        if (e.name == name) return e;
    std::string known;
    for (const auto& n : memory_names()) known += (known.empty() ? "" : ", ") + n;
    throw UsageError("unknown memory '" + name + "' (known: " + known + ")");
}

Spec parse_memory_spec(const std::string& text) {
    const RawSpec raw = split_spec(text, "memory");
    return bind_spec(find_memory(raw.name).schema(), raw);
}

std::unique_ptr<Memory> make_memory(const Spec& spec, const MemoryShape& shape, std::uint64_t seed) {
    const MemoryEntry& entry = find_memory(spec.name());
    if (shape.d_key <= 0 || shape.d_value <= 0)
        throw UsageError("memory '" + spec.canonical() + "': dimensions must be positive");
    if (shape.salience_feature && (*shape.salience_feature < 0 || *shape.salience_feature >= shape.d_value))
        throw std::invalid_argument("input description: salience feature " + std::to_string(*shape.salience_feature) +
                                    " is not a coordinate of a " + std::to_string(shape.d_value) + "-float value");
    if (shape.budget_floats) {
        const std::int64_t minimum = entry.min_budget(spec, shape);
        if (*shape.budget_floats < minimum)
            throw UsageError("memory '" + spec.canonical() + "': budget " + std::to_string(*shape.budget_floats) +
                             " floats is below its minimum of " + std::to_string(minimum) + " at d_k=" +
                             std::to_string(shape.d_key) + ", d_v=" + std::to_string(shape.d_value));
    }
    Rng rng = Rng::stream("memory", spec.canonical(), shape.d_key, shape.d_value,
                          shape.budget_floats.value_or(-1), seed);
    return entry.make(spec, shape, rng);
}

}  // namespace memcap
