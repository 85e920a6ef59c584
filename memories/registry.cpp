// memcap/memories/registry.cpp — the one table of memory backends.
//
// Adding a backend: write memories/<name>.hpp/.cpp, add one entry below, add a
// row to memories/README.md. `memcap list`, the conformance tests and the
// benchmarks pick it up from this table.
#include "memories/registry.hpp"

#include "core/error.hpp"
#include "memories/delta_grid.hpp"
#include "memories/hrr.hpp"
#include "memories/linear_grid.hpp"
#include "memories/rotation_rnn.hpp"
#include "memories/selective_state.hpp"
#include "memories/softmax_cache.hpp"

#include <cmath>

namespace memcap {
namespace {

const ParamInfo phi_param = choice_param("phi", {"proj", "dpfp"}, "feature map when d_phi != d_k (identity otherwise)");
const ParamInfo nu_param = int_param("nu", "1", "DPFP order (phi=dpfp)", 1, 8);

std::int64_t grid_min_budget(const Spec& spec, const MemoryShape& s) {
    return FeatureMap::min_dim(spec.text("phi"), static_cast<int>(spec.integer("nu"))) * s.d_value;
}

std::vector<MemoryEntry> build_registry() {
    return {
        //  name       what it is (memcap list)
        {"softmax", "softmax attention over a FIFO key-value cache",
         {real_param("beta", "16", "sharpness on raw dot products (0 = uniform attention)", 0.0)},
         "(stored pairs) x (d_k + d_v), at most floor(B / (d_k + d_v)) pairs; unbounded without a budget",
         "Bahdanau et al. 2014; Vaswani et al. 2017",
         [](const Spec&, const MemoryShape& s) { return std::int64_t{s.d_key + s.d_value}; },
         [](const Spec& spec, const MemoryShape& s, Rng&) -> std::unique_ptr<Memory> {
             return std::make_unique<SoftmaxCache>(s, spec.real("beta"));
         }},
        {"linear", "linear-attention / fast-weight outer-product grid",
         {phi_param, nu_param},
         "d_v x d_phi, d_phi = floor(B / d_v) (dpfp: rounded down to a multiple of 2 nu); d_k without a budget",
         "Katharopoulos et al. 2020; Schlag, Irie & Schmidhuber 2021",
         grid_min_budget,
         [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
             return std::make_unique<LinearGrid>(s, spec.text("phi"), static_cast<int>(spec.integer("nu")), rng);
         }},
        {"delta", "delta-rule outer-product grid (fast weights that edit)",
         {real_param("beta", "1", "write strength beta_w", 0.0, true, 2.0), phi_param, nu_param},
         "d_v x d_phi, as linear", "Schlag, Irie & Schmidhuber 2021",
         grid_min_budget,
         [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
             return std::make_unique<DeltaGrid>(s, spec.real("beta"), spec.text("phi"),
                                                static_cast<int>(spec.integer("nu")), rng);
         }},
        {"hrr", "holographic reduced representation: circular convolution, unbind by correlation",
         {},
         "D = B (d without a budget)", "Plate 1995",
         [](const Spec&, const MemoryShape&) { return std::int64_t{1}; },
         [](const Spec&, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
             return std::make_unique<Hrr>(s, rng);
         }},
        {"rotation", "decaying rotation RNN s <- rho R s + U x, read by a least-squares probe",
         {real_param("rho", "0.9", "decay per step", 0.0, false, 1.0, true),
          choice_param("angles", {"uniform", "haar"}, "rotation angles: i.i.d. uniform, or those of a Haar R (D <= 2048)")},
         "D = B (d without a budget)", "essay 004 Part 1",
         [](const Spec&, const MemoryShape&) { return std::int64_t{1}; },
         [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
             return std::make_unique<RotationRnn>(s, spec.real("rho"), spec.text("angles"), rng);
         },
         false},
        {"selective", "selective state model S <- a(x) S + b(x) v phi(k)^T, input-dependent step (Mamba)",
         {real_param("rho", "1", "decay per full step (1 = none)", 0.0, true, 1.0),
          choice_param("gate", {"salience", "none"}, "step from the token-class feature v_0, or always 1"),
          phi_param, nu_param},
         "d_v x d_phi, as linear", "Gu & Dao 2023 (Mamba); Dao & Gu 2024",
         grid_min_budget,
         [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
             return std::make_unique<SelectiveState>(s, spec.real("rho"), spec.text("gate") == "salience",
                                                     spec.text("phi"), static_cast<int>(spec.integer("nu")), rng);
         }},
    };
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
