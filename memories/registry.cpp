// memcap/memories/registry.cpp — the one table of memory backends.
//
// Adding a backend: write memories/<name>.hpp/.cpp, add one entry below, add a
// row to memories/README.md. `memcap list`, the conformance tests and the
// benchmarks pick it up from this table.
#include "memories/registry.hpp"

#include "core/error.hpp"
#include "memories/linear_grid.hpp"
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
