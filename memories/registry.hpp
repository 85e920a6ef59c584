// memcap/memories/registry.hpp — the table of memory backends.
//
// One entry per backend, in one explicit table (registry.cpp): its name, a
// one-line description, its parameters with defaults, its state_floats
// formula, its minimum budget, its source paper and its factory. `memcap list`
// prints this table; the conformance tests and benchmarks iterate over it, so
// a backend added here is listed, tested and benchmarked with no other change.
#pragma once

#include "core/rng.hpp"
#include "core/spec.hpp"
#include "memories/memory.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace memcap {

/// Which batched call a cost model describes.
enum class Kernel { write_batch, read_batch };

/// Declared work of one batched call, for the benchmarks' roofline (bench/,
/// PERFORMANCE.md): floating-point operations (an exp, a division or a square
/// root counts as one) and compulsory bytes — inputs read, outputs written,
/// state read (and written back by a write) and fixed parameters read, each
/// once; temporaries that a blocked kernel can keep in cache are not counted.
struct KernelCost {
    double flops = 0.0;
    double bytes = 0.0;
};

/// The cost of `kernel` on the memory `spec` built for `shape`: a write_batch
/// of `batch` items into a memory that already holds `stored` writes, or a
/// read_batch of `batch` queries from a memory that holds `stored` writes.
using CostModel = std::function<KernelCost(const Spec&, const MemoryShape&, Kernel, std::int64_t stored,
                                           std::int64_t batch)>;

struct MemoryEntry {
    std::string name;
    std::string description;
    std::vector<ParamInfo> params;
    std::string state_formula;  // e.g. "d_v × floor(B / d_v)"
    std::string paper;
    /// Smallest budget (floats) the backend `spec` can be built with for this shape.
    std::function<std::int64_t(const Spec&, const MemoryShape&)> min_budget;
    /// Builds the backend; `params_rng` supplies its fixed random parameters.
    std::function<std::unique_ptr<Memory>(const Spec&, const MemoryShape&, Rng& params_rng)> make;
    /// FLOP-and-byte model of write_batch / read_batch (the benchmarks' roofline).
    CostModel cost;

    // ---- Traits: declared properties the harness, the tests and the reports act on,
    // instead of lists of backend names.
    /// False when read() is not the memory's meaningful read: `--readout auto`
    /// then scores it through the probe (the rotation RNN).
    bool native_read = true;
    /// True when writes commute at the natural size with default parameters: the
    /// same pairs written in any order leave the same state up to rounding (the
    /// paired-permutation control expects equal reads).
    bool order_free = false;
    /// True when the memory keeps written pairs apart, so that a read can be told
    /// to skip one of them (the structural-mask control).
    bool can_hide_pairs = false;

    Schema schema() const { return {"memory", name, params}; }
};

/// Every backend, in table order.
const std::vector<MemoryEntry>& memory_registry();
/// Names of every backend, in table order.
std::vector<std::string> memory_names();
/// The entry called `name`; UsageError listing the known names otherwise.
const MemoryEntry& find_memory(const std::string& name);
/// Parses and binds a memory spec string (UsageError on any problem).
Spec parse_memory_spec(const std::string& text);

/// Builds the memory `spec` for `shape`, checking the budget against the backend's
/// minimum. Its random parameters come from the stream (memory spec, d_key, d_value,
/// budget, seed), so they never depend on the task or on thread order.
std::unique_ptr<Memory> make_memory(const Spec& spec, const MemoryShape& shape, std::uint64_t seed);

}  // namespace memcap
