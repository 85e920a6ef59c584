// memcap/memories/registry.cpp — the one table of memory backends.
//
// Adding a backend: write memories/<name>.hpp/.cpp (with its one sizing function,
// a static size(shape, ...)), add one entry below (its MemorySize adapter, its
// FLOP-and-byte model, see KernelCost, and its traits), add a row to
// memories/README.md. `memcap list`, the conformance tests and the benchmarks
// pick it up from this table.
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
#include <iterator>
#include <limits>
#include <stdexcept>

namespace memcap {
namespace {

const ParamInfo phi_param = choice_param("phi", {"proj", "dpfp"}, "feature map when d_phi != d_k (identity otherwise)");
const ParamInfo nu_param = int_param("nu", "1", "DPFP order (phi=dpfp)", 1, 8);

// ---- Sizing: each backend's one sizing function (its class's static size()), as the
// table's generic MemorySize. ----

MemorySize softmax_size(const Spec& spec, const MemoryShape& s) {
    const bool null_slot = spec.has("null");
    const SoftmaxCache::Dims c = SoftmaxCache::size(s, null_slot);
    MemorySize m;
    m.dims = {{"pairs", c.capacity}};
    m.state_floats = c.capacity < 0 ? -1 : (c.capacity + (null_slot ? 1 : 0)) * c.row_floats;
    m.floats_per_write = c.row_floats;
    m.initial_floats = null_slot ? c.row_floats : 0;  // the null slot's row
    m.min_budget = c.min_budget;
    return m;
}

OuterProductGrid::Dims grid_dims(const Spec& spec, const MemoryShape& s) {
    return OuterProductGrid::size(s, spec.text("phi"), static_cast<int>(spec.integer("nu")));
}

MemorySize grid_size(const Spec& spec, const MemoryShape& s) {
    const OuterProductGrid::Dims g = grid_dims(spec, s);
    MemorySize m;
    m.dims = {{"d_phi", g.phi.dim}};
    if (spec.text("phi") == "dpfp") m.dims.emplace_back("m", g.phi.m);  // the projection before DPFP
    m.state_floats = g.state_floats();
    m.param_floats = g.phi.param_floats;
    m.build_scratch_bytes = g.phi.build_scratch_bytes;
    m.min_budget = g.min_budget;
    return m;
}

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

MemorySize rotation_size(const Spec& spec, const MemoryShape& s) {
    const RotationRnn::Dims r = RotationRnn::size(s, spec.text("angles"));
    MemorySize m;
    m.dims = {{"D", r.dim}, {"d_in", r.d_in}};
    m.state_floats = r.dim;
    m.param_floats = r.param_floats();
    m.build_scratch_bytes = r.build_scratch_bytes;
    m.min_budget = 1;
    return m;
}

// ---- FLOP-and-byte models (bench/, docs/performance.md), and the bytes of each call's
// temporaries (memory_peak_bytes). f = 4 bytes per float. ----
constexpr double kFloat = 4.0;
using I = std::int64_t;

// Bytes every batched call moves: the batch in (keys and values, or queries)
// and, for a read, the reads out.
double batch_bytes(const MemoryShape& s, I batch) { return kFloat * double(batch) * (s.d_key + s.d_value); }

// φ of a batch: the feature rows, and for DPFP the projected rows and [relu(y), relu(−y)].
double phi_scratch_bytes(const OuterProductGrid::Dims& g, bool dpfp, I batch) {
    return kFloat * double(batch) * (g.phi.dim + (dpfp ? 3.0 * g.phi.m : 0.0));
}

// The feature map's FLOPs per row: the projection (2 per parameter), and DPFP's relus and products.
double phi_flops_per_row(const OuterProductGrid::Dims& g, bool dpfp, I nu) {
    return 2.0 * double(g.phi.param_floats) + (dpfp ? 2.0 * g.phi.m + 2.0 * g.phi.m * double(nu) : 0.0);
}

// Σ v φ(k)ᵀ grids (linear, selective): a write is one GEMM, a read is one GEMM.
KernelCost grid_cost(const Spec& spec, const MemoryShape& s, Kernel k, I batch, double extra_per_row) {
    const OuterProductGrid::Dims g = grid_dims(spec, s);
    const bool dpfp = spec.text("phi") == "dpfp";
    const double d_phi = g.phi.dim, state = double(g.state_floats()), b = double(batch);
    KernelCost c;
    c.flops = b * (phi_flops_per_row(g, dpfp, spec.integer("nu")) + extra_per_row + 2.0 * s.d_value * d_phi);
    c.bytes = batch_bytes(s, batch) + kFloat * (double(g.phi.param_floats) + (k == Kernel::write_batch ? 2.0 : 1.0) * state);
    c.scratch_bytes = phi_scratch_bytes(g, dpfp, batch);
    return c;
}

KernelCost softmax_cost(const Spec& spec, const MemoryShape& s, Kernel k, I stored, I batch) {
    const I capacity = SoftmaxCache::size(s, spec.has("null")).capacity;
    KernelCost c;
    if (k == Kernel::write_batch) {  // copies: the pairs in, the same floats into the cache
        c.bytes = 2.0 * batch_bytes(s, batch);
        return c;
    }
    const double m = double(capacity < 0 ? stored : std::min(stored, capacity));
    // scores K q (2 d_k), max, subtract-scale, exp, sum, divide (≈ 5), weighted sum of V (2 d_v)
    c.flops = double(batch) * m * (2.0 * s.d_key + 5.0 + 2.0 * s.d_value);
    c.bytes = batch_bytes(s, batch) + kFloat * m * (s.d_key + s.d_value);
    c.scratch_bytes = kFloat * double(batch) * m;  // the batch × stored score matrix
    return c;
}

KernelCost linear_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    return grid_cost(spec, s, k, batch, 0.0);
}

KernelCost delta_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const double d_phi = grid_dims(spec, s).phi.dim;
    // normalising φ: 2 d_phi + 1 (+ sqrt, divide); a write also does err = v − M φ (2 d_v d_phi + d_v)
    // and M += (β err) φᵀ (2 d_v d_phi + d_v): a rank-1 update chain, two passes over M per item.
    const double extra = 3.0 * d_phi + 2.0 + (k == Kernel::write_batch ? 2.0 * s.d_value * d_phi + 2.0 * s.d_value : 0.0);
    return grid_cost(spec, s, k, batch, extra);
}

KernelCost selective_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const double d_phi = grid_dims(spec, s).phi.dim;
    // a write also computes the gate (2 d_v + 4; only with gate=salience and a declared
    // salience feature, else Δ = 1) and scales φ's row by its weight (d_phi)
    const double gate = spec.text("gate") == "salience" && s.salience_feature ? 2.0 * s.d_value + 4.0 : 0.0;
    KernelCost c = grid_cost(spec, s, k, batch, k == Kernel::write_batch ? gate + d_phi : 0.0);
    if (k == Kernel::write_batch) c.scratch_bytes += kFloat * double(batch) * (d_phi + 1.0);  // the weighted rows, the weights
    return c;
}

KernelCost hrr_cost(const Spec&, const MemoryShape& s, Kernel k, I, I batch) {
    // The batch takes the cheaper of its per-item and factored forms (hrr.hpp); so does the model.
    const Hrr::Dims h = Hrr::size(s);
    const double dim = h.dim, b = double(batch), bins = h.bins();
    const double key_map = h.key_map ? dim * s.d_key : 0.0, value_map = h.value_map ? dim * s.d_value : 0.0;
    const auto flops = k == Kernel::write_batch ? Hrr::write_flops : Hrr::read_flops;
    const double per_item = flops(dim, s.d_key, s.d_value, b, false), factored = flops(dim, s.d_key, s.d_value, b, true);
    KernelCost c;
    c.flops = std::min(per_item, factored);
    c.bytes = batch_bytes(s, batch) + kFloat * ((k == Kernel::write_batch ? 2.0 : 1.0) * dim + key_map + value_map);
    // Temporaries of the form the batch takes (the factored one needs the kept spectra).
    const double dk = s.d_key, dv = s.d_value;
    if (h.spectra && factored < per_item) {
        if (k == Kernel::write_batch)  // G = Kᵀ V, A G (Re, Im), the summed spectrum
            c.scratch_bytes = kFloat * (dk * dv + 2.0 * bins * dv + 2.0 * bins);
        else  // Z (Re, Im) and Wᵀ; or, without a value map, Y (d_k × D)
            c.scratch_bytes = kFloat * ((h.value_map ? 2.0 * bins * dk : dk * dim) + dk * dv);
    } else {  // the rows mapped in (none where D = d: they enter as they are): keys and values, or
              // queries and the D-float reads
        const double key_row = h.key_map ? dim : 0.0;
        c.scratch_bytes = kFloat * b * (key_row + (k == Kernel::write_batch ? (h.value_map ? dim : 0.0) : dim));
    }
    return c;
}

KernelCost rotation_cost(const Spec& spec, const MemoryShape& s, Kernel k, I, I batch) {
    const RotationRnn::Dims r = RotationRnn::size(s, spec.text("angles"));
    const double dim = r.dim, b = double(batch);
    const double map = r.input_map ? dim * r.d_in : 0.0;
    KernelCost c;
    c.bytes = batch_bytes(s, batch) + kFloat * ((k == Kernel::write_batch ? 2.0 : 1.0) * dim + map);
    if (k == Kernel::write_batch) {  // U x (one GEMM), then per step 5 FLOPs per state float (2 × 2 rotation, decay, add)
        c.flops = b * (2.0 * map + 5.0 * dim);
        // the inputs as rows; with U also their distinct rows, mapped, and the index of each
        // (at most every row distinct; about 80 bytes per row for the index and its hash table)
        if (!(s.positional_keys && !r.input_map))
            c.scratch_bytes = kFloat * b * r.d_in + (r.input_map ? kFloat * b * (r.d_in + dim) + 80.0 * b : 0.0);
    } else {  // read() decodes U_vᵀ s per query (the native read ignores the query)
        c.flops = b * 2.0 * dim * s.d_value;
    }
    return c;
}

std::vector<MemoryEntry> build_registry() {
    std::vector<MemoryEntry> table;
    {
        MemoryEntry e;
        e.name = "softmax";
        e.description = "softmax attention over a FIFO key-value cache";
        e.params = {real_param("beta", "16", "sharpness on raw dot products (0 = uniform attention)", 0.0)};
        // softmax:beta=best: the scale that suits the width and the noise, in factors of 2 from a
        // soft average (1) to a hard argmax over narrow codes (1024)
        e.params[0].best = {"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024"};
        e.params.push_back(optional_param(real_param(
            "null", "", "a null slot: constant logit s (against beta k.q) with a zero value, taking one pair's row; none: no slot",
            -std::numeric_limits<double>::infinity())));
        e.params[1].best = {"0", "2", "4", "6", "8", "10", "12", "14", "16"};  // softmax:null=best
        e.state_formula = "(stored pairs) x (d_k + d_v), at most floor(B / (d_k + d_v)) pairs (one fewer with a null slot, "
                          "whose row counts); unbounded without a budget";
        e.paper = "Bahdanau et al. 2014; Vaswani et al. 2017";
        e.size = softmax_size;
        e.make = [](const Spec& spec, const MemoryShape& s, Rng&) -> std::unique_ptr<Memory> {
            return std::make_unique<SoftmaxCache>(s, spec.real("beta"),
                                                  spec.has("null") ? std::optional<double>(spec.real("null")) : std::nullopt);
        };
        e.cost = softmax_cost;
        e.order_free = true;      // unbounded without a budget: never evicts, and attention is a sum over pairs
        e.can_hide_pairs = true;  // one row per pair: a read can give one of them weight 0
        e.backward = true;        // SoftmaxCache::backward
        table.push_back(std::move(e));
    }
    {
        MemoryEntry e;
        e.name = "linear";
        e.description = "linear-attention / fast-weight outer-product grid";
        e.params = {phi_param, nu_param};
        e.state_formula = "d_v x d_phi, d_phi = floor(B / d_v) (dpfp: rounded down to a multiple of 2 nu); d_k without a budget";
        e.paper = "Katharopoulos et al. 2020; Schlag, Irie & Schmidhuber 2021";
        e.size = grid_size;
        e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
            return std::make_unique<LinearGrid>(s, spec.text("phi"), static_cast<int>(spec.integer("nu")), rng);
        };
        e.cost = linear_cost;
        e.order_free = true;  // M = sum of v phi(k)^T
        e.backward = true;    // OuterProductGrid::backward
        table.push_back(std::move(e));
    }
    {
        MemoryEntry e;
        e.name = "delta";
        e.description = "delta-rule outer-product grid (fast weights that edit)";
        e.params = {real_param("beta", "1", "write strength beta_w", 0.0, true, 2.0), phi_param, nu_param};
        // delta:beta=best. In 1-2-5 steps down to 0.01: on one pass over random keys the best
        // step falls as n grows past d_phi (about 0.05 at n = 3 d_phi), and beta -> 0 is the
        // linear grid (up to scale, which the nearest-value read ignores); 1 and 1.5 are for
        // few pairs, where overwriting what a key already reads pays.
        e.params[0].best = {"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "1.5"};
        e.state_formula = "d_v x d_phi, as linear";
        e.paper = "Schlag, Irie & Schmidhuber 2021";
        e.size = grid_size;
        e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
            return std::make_unique<DeltaGrid>(s, spec.real("beta"), spec.text("phi"),
                                               static_cast<int>(spec.integer("nu")), rng);
        };
        e.cost = delta_cost;
        e.order_free = false;  // each write edits what the previous ones left
        e.backward = true;     // back through the recurrence (DeltaGrid::write_backward)
        table.push_back(std::move(e));
    }
    {
        MemoryEntry e;
        e.name = "hrr";
        e.description = "holographic reduced representation: circular convolution, unbind by correlation";
        e.state_formula = "D = B (d without a budget)";
        e.paper = "Plate 1995";
        e.size = hrr_size;
        e.make = [](const Spec&, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
            return std::make_unique<Hrr>(s, rng);
        };
        e.cost = hrr_cost;
        e.order_free = true;  // T = sum of k (*) v
        e.backward = true;    // through the FFTs (Hrr::backward)
        e.takes_spectra = [](const Spec&, const MemoryShape& s) {  // no maps: D = d (Hrr::takes_spectra)
            const Hrr::Dims h = Hrr::size(s);
            return !h.key_map && !h.value_map;
        };
        table.push_back(std::move(e));
    }
    {
        MemoryEntry e;
        e.name = "rotation";
        e.description = "decaying rotation RNN s <- rho R s + U x, read by a least-squares probe";
        e.params = {real_param("rho", "0.9", "decay per step", 0.0, false, 1.0, true),
                    choice_param("angles", {"uniform", "haar"},
                                 "rotation angles: i.i.d. uniform, or those of a Haar R (D <= 2048)")};
        // rotation:rho=best: from a fast decay to the slowest the range allows (rho < 1)
        e.params[0].best = {"0.5", "0.8", "0.9", "0.95", "0.98", "0.99"};
        e.state_formula = "D = B (d without a budget)";
        e.paper = "essay 004 Part 1";
        e.size = rotation_size;
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
        // selective:rho=best: no decay (the range's end), then decays whose memory spans
        // about 1000, 300, 100, 30 and 10 writes
        e.params[0].best = {"1", "0.999", "0.997", "0.99", "0.97", "0.9"};
        e.state_formula = "d_v x d_phi, as linear";
        e.paper = "Gu & Dao 2023 (Mamba); Dao & Gu 2024";
        e.size = grid_size;
        e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
            return std::make_unique<SelectiveState>(s, spec.real("rho"), spec.text("gate") == "salience",
                                                    spec.text("phi"), static_cast<int>(spec.integer("nu")), rng);
        };
        e.cost = selective_cost;
        e.order_free = true;  // with its default rho = 1 no write decays another: a weighted sum of v phi(k)^T
        e.backward = true;    // the gates read only the values (SelectiveState::write_backward)
        table.push_back(std::move(e));
    }
    return table;
}


std::deque<MemoryEntry>& registry_storage() {
    static std::deque<MemoryEntry> registry = [] {
        std::vector<MemoryEntry> table = build_registry();
        return std::deque<MemoryEntry>(std::make_move_iterator(table.begin()), std::make_move_iterator(table.end()));
    }();
    return registry;
}

}  // namespace

const std::deque<MemoryEntry>& memory_registry() { return registry_storage(); }

void register_memory(MemoryEntry entry) {
    if (entry.name.empty()) throw UsageError("register_memory: a memory backend needs a name");
    const auto bad_name = [&] {
        return UsageError("register_memory: '" + entry.name + "' is not a memory name (letters, digits, '_', '-'; no ':', "
                          "which starts a spec's parameters)");
    };
    RawSpec raw;
    try {
        raw = split_spec(entry.name, "memory");  // UsageError on characters a spec name may not use
    } catch (const UsageError&) {
        throw bad_name();
    }
    if (raw.name != entry.name || !raw.pairs.empty()) throw bad_name();
    for (const auto& e : memory_registry())
        if (e.name == entry.name) throw UsageError("register_memory: memory '" + entry.name + "' is already registered");
    if (!entry.size || !entry.make)
        throw UsageError("register_memory: memory '" + entry.name + "' needs a sizing function (size) and a factory (make)");
    bind_spec(entry.schema(), raw);  // every parameter's default binds (UsageError naming it otherwise)
    registry_storage().push_back(std::move(entry));
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

std::int64_t MemorySize::state_floats_after(std::int64_t writes) const {
    if (floats_per_write == 0) return state_floats;
    const std::int64_t grown = writes > std::numeric_limits<std::int64_t>::max() / floats_per_write
                                   ? std::numeric_limits<std::int64_t>::max()
                                   : writes * floats_per_write + initial_floats;
    return state_floats < 0 ? grown : std::min(grown, state_floats);
}

MemorySize memory_size(const Spec& spec, const MemoryShape& shape) { return memory_size(find_memory(spec.name()), spec, shape); }

MemorySize memory_size(const MemoryEntry& entry, const Spec& spec, const MemoryShape& shape) {
    if (shape.d_key <= 0 || shape.d_value <= 0)
        throw UsageError("memory '" + spec.canonical() + "': dimensions must be positive");
    if (shape.salience_feature && (*shape.salience_feature < 0 || *shape.salience_feature >= shape.d_value))
        throw std::invalid_argument("input description: salience feature " + std::to_string(*shape.salience_feature) +
                                    " is not a coordinate of a " + std::to_string(shape.d_value) + "-float value");
    MemorySize size = entry.size(spec, shape);
    if (shape.budget_floats && *shape.budget_floats < size.min_budget)
        throw UsageError("memory '" + spec.canonical() + "': budget " + std::to_string(*shape.budget_floats) +
                         " floats is below its minimum of " + std::to_string(size.min_budget) + " at d_k=" +
                         std::to_string(shape.d_key) + ", d_v=" + std::to_string(shape.d_value));
    return size;
}

std::int64_t memory_peak_bytes(const Spec& spec, const MemoryShape& shape, std::int64_t writes, std::int64_t reads) {
    const MemoryEntry& entry = find_memory(spec.name());
    return memory_peak_bytes(entry, memory_size(entry, spec, shape), spec, shape, writes, reads);
}

std::int64_t memory_peak_bytes(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                               std::int64_t writes, std::int64_t reads) {
    // A growing state with a bound allocates its bound up front (the cache reserves it).
    const double state = size.floats_per_write > 0 && size.state_floats >= 0 ? double(size.state_floats)
                                                                             : double(size.state_floats_after(writes));
    double scratch = double(size.build_scratch_bytes);
    if (entry.cost) {
        scratch = std::max(scratch, entry.cost(spec, shape, Kernel::write_batch, 0, writes).scratch_bytes);
        scratch = std::max(scratch, entry.cost(spec, shape, Kernel::read_batch, writes, reads).scratch_bytes);
    }
    const double bytes = 4.0 * (state + double(size.param_floats) + double(size.derived_floats)) + scratch;
    return bytes >= 9.2e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(std::ceil(bytes));
}

std::string describe_size(const MemorySize& size) {
    const auto floats = [](std::int64_t x) { return std::to_string(x) + (x == 1 ? " float" : " floats"); };
    std::string out;
    for (const auto& [name, value] : size.dims)
        out += (out.empty() ? "" : ", ") + name + (value < 0 ? " unbounded" : " = " + std::to_string(value));
    out += out.empty() ? "" : "; ";
    if (size.floats_per_write == 0) out += "state " + floats(size.state_floats);
    else if (size.state_floats < 0) out += "state " + floats(size.floats_per_write) + " per write, unbounded";
    else out += "state up to " + floats(size.state_floats) + " (" + std::to_string(size.floats_per_write) + " per write)";
    out += "; parameters " + floats(size.param_floats);
    if (size.derived_floats > 0) out += " (+ " + floats(size.derived_floats) + " derived from them)";
    return out;
}

std::unique_ptr<Memory> make_memory(const Spec& spec, const MemoryShape& shape, std::uint64_t seed) {
    const MemoryEntry& entry = find_memory(spec.name());
    return make_memory(entry, memory_size(entry, spec, shape), spec, shape, seed);
}

std::unique_ptr<Memory> make_memory(const MemoryEntry& entry, const MemorySize& size, const Spec& spec,
                                    const MemoryShape& shape, std::uint64_t seed) {
    Rng rng = Rng::stream("memory", spec.canonical(), shape.d_key, shape.d_value,
                          shape.budget_floats.value_or(-1), seed);
    auto memory = entry.make(spec, shape, rng);
    if (memory->param_floats() != size.param_floats || memory->state_floats() != size.state_floats_after(0))
        throw std::logic_error("memory '" + spec.canonical() + "' was built with " +
                               std::to_string(memory->param_floats()) + " parameter and " +
                               std::to_string(memory->state_floats()) + " state floats; its sizing function says " +
                               std::to_string(size.param_floats) + " and " + std::to_string(size.state_floats_after(0)));
    return memory;
}

}  // namespace memcap
