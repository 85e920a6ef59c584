// memcap/memories/registry.hpp — the table of memory backends.
//
// One entry per backend: its name, a one-line description, its parameters with
// defaults, its state_floats formula, its source paper, its sizing function, its
// factory, its cost model and its traits. A built-in backend's entry is defined in
// its folder (memories/<name>/entry.cpp) and listed once in registry.cpp. `memcap
// list` prints this table; the conformance tests and benchmarks iterate over it, so a
// backend listed there is listed, tested and benchmarked with no other change. Backends outside the table (a test's, a
// plugin's) join it through register_memory and are then treated exactly the
// same: listed, parsed, sized, built, costed, tested by the conformance tests.
#pragma once

#include "core/rng.hpp"
#include "core/spec.hpp"
#include "memories/memory.hpp"
#include "memories/theory/forgetting.hpp"
#include "memories/theory/recall_model.hpp"

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace memcap {

/// Which batched call a cost model describes.
enum class Kernel { write_batch, read_batch };

/// Declared work of one batched call: floating-point operations (an exp, a division or a square
/// root counts as one) and compulsory bytes — inputs read, outputs written,
/// state read (and written back by a write) and fixed parameters read, each
/// once; temporaries that a blocked kernel can keep in cache are not counted.
/// The FLOPs shape results: the width race (harness/exec/tuning.cpp) prunes a candidate
/// that costs more than one still in and reads no better, and gives a tie to the cheapest.
/// FLOPs and bytes are also the benchmarks' roofline (bench/, docs/performance.md).
/// `scratch_bytes` is not part of either: the bytes of the temporaries the call
/// allocates beyond the memory's state and parameters (feature rows, score matrices,
/// mapped inputs), for the peak-memory estimate (memory_peak_bytes).
struct KernelCost {
    double flops = 0.0;
    double bytes = 0.0;
    double scratch_bytes = 0.0;
};

/// Bytes per stored float, for cost models' byte counts.
inline constexpr double kFloat = 4.0;

/// Bytes every batched call moves: the batch in (keys and values, or queries) and, for a
/// read, the reads out (4 bytes per float). For cost models.
double batch_bytes(const MemoryShape& s, std::int64_t batch);

/// The cost of `kernel` on the memory `spec` built for `shape`: a write_batch
/// of `batch` items into a memory that already holds `stored` writes, or a
/// read_batch of `batch` queries from a memory that holds `stored` writes.
using CostModel = std::function<KernelCost(const Spec&, const MemoryShape&, Kernel, std::int64_t stored,
                                           std::int64_t batch)>;

/// A backend's size at one shape (spec, input description and budget), from its one
/// sizing function: the dimensions, and the floats they take. The backend's
/// constructor, cost model and minimum budget derive from the same function, and
/// `memcap list` prints it (describe_size).
struct MemorySize {
    /// Named dimensions, in the order `memcap list` prints them, e.g. {"d_phi", 16};
    /// −1 = unbounded.
    std::vector<std::pair<std::string, std::int64_t>> dims;
    /// Floats of state when full; −1 = grows without bound (a cache without a budget).
    std::int64_t state_floats = 0;
    /// 0: the state has its full size from the start. Otherwise it grows by this many
    /// floats per write until full (the cache).
    std::int64_t floats_per_write = 0;
    /// With floats_per_write > 0: floats held before any write (the cache's null slot).
    std::int64_t initial_floats = 0;
    /// Set when the state does not grow by floats_per_write a write: its floats after `writes`
    /// writes (KIVI's cache: pairs enter at full precision, floats_per_write each, and leave it
    /// quantised, a group at a time). state_floats stays the most it holds.
    std::function<std::int64_t(std::int64_t)> grows_as;
    /// Floats of fixed parameters (projections, rotations): Memory::param_floats().
    std::int64_t param_floats = 0;
    /// Floats the memory keeps besides state and parameters (tables derived from them).
    std::int64_t derived_floats = 0;
    /// Bytes of temporaries while it is built (the QR that draws a projection).
    std::int64_t build_scratch_bytes = 0;
    /// Smallest budget (floats) it can be built with at these dimensions.
    std::int64_t min_budget = 1;

    /// Floats of state after `writes` writes since reset (Memory::state_floats()).
    std::int64_t state_floats_after(std::int64_t writes) const;
    /// The dimension called `name` (std::logic_error when there is none).
    std::int64_t dim(const std::string& name) const;
};

/// How zoology (github.com/HazyResearch/zoology, the recall benchmark's mixers: each mixer's
/// `state_size()`) counts the state of the same mixer, for the mixers both have: `formula`
/// names zoology's file and its formula in zoology's names, how memcap's dimensions map to
/// them (one head), and how memcap's count relates to it; `floats` computes zoology's count
/// at a memory's size (memcap's sizing function at a shape), −1 where it is unbounded.
struct ZoologyCount {
    std::string formula;
    std::function<std::int64_t(const MemorySize&, const MemoryShape&)> floats;
};

/// How the trained frame's layer (harness/train/) computes this memory's gate inputs from a
/// token, as the memory's paper builds its layer (docs/training.md); a gate is used only when
/// the entry also declares that gate input (`gates`).
struct LayerGates {
    enum class Decay {
        none,             // the memory's own decay at every token
        scalar_softplus,  // log a_t = −softplus(w·x + b) exp(A_log) (Mamba-2, Gated DeltaNet)
        channel_gla,      // per channel, low rank: logsigmoid(W2 W1 x + b) / 16 (GLA)
        channel_kda,      // per channel, low rank: −softplus(W2 W1 x + b) exp(A_log) (KDA)
        channel_rwkv      // per channel: −e^{−1/2} sigmoid(b + W2 tanh(W1 x)) (RWKV-7)
    };
    Decay decay = Decay::none;
    bool write_gate = false;  // with scalar_softplus: the write gate 1 − e^{−Δ_t} (Mamba-2)
    bool beta = false;        // β_t = sigmoid(w·x + b) (the delta family)
    bool norm = true;         // RMSNorm on the memory's outputs (attention has none)
};

struct MemoryEntry {
    std::string name;
    std::string description;
    std::vector<ParamInfo> params;
    std::string state_formula;  // e.g. "d_v × floor(B / d_v)"
    std::string paper;
    /// zoology's count of the same mixer's state, beside state_formula in `memcap list`;
    /// none when zoology has no such mixer.
    std::optional<ZoologyCount> zoology;
    /// The backend's sizing function: its dimensions and floats for `spec` at `shape`
    /// (a budget below the minimum gives dimensions that make_memory refuses). Throws
    /// UsageError when the shape cannot be built at all (a dimension beyond an int).
    std::function<MemorySize(const Spec&, const MemoryShape&)> size;
    /// Builds the backend; `params_rng` supplies its fixed random parameters.
    std::function<std::unique_ptr<Memory>(const Spec&, const MemoryShape&, Rng& params_rng)> make;
    /// FLOP-and-byte model of write_batch / read_batch, and the bytes of their temporaries
    /// (the peak-memory estimate). Its FLOPs decide the width race's ties and prune its
    /// dominated candidates, so it shapes results; also the benchmarks' roofline.
    CostModel cost;
    /// The arithmetic of one cell's time against the budget B (n writes and q reads at width d), in
    /// words: "O(n·B): a read-and-correct of the d_φ × d_v grid per write". `memcap list --json`
    /// gives it; scripts/cell_costs.py measures the memories that state one and prints it beside
    /// their times. Empty: not in that table.
    std::string cost_growth;

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
    /// The per-token gate inputs its causal form takes (Memory::write_gated, TokenGates):
    /// e.g. a decay per token for the decaying grids, a step β per token for the delta rule.
    /// Every other gate input is refused (up front by the harness, check_gates; by the memory
    /// with std::invalid_argument). Default: none.
    GateInputs gates;
    /// True when the table gives the entry the key `heads` (memories/heads.hpp): heads=h splits
    /// its width and state into h heads of d/h and floor(B/h) floats each (the grids and the
    /// cache). heads=1, or left out, is the memory itself.
    bool splits_into_heads = false;
    /// True when its reads change what it keeps later (a KV-cache policy scored by attention,
    /// memories/softmax/kv_policy.hpp): a causal pass's final state then depends on its queries,
    /// and equals write_batch's (followed by a read of the last key) when each token's query is
    /// its own key — the rule by which such a cache scores writes that no read follows.
    bool reads_steer_writes = false;
    /// True when the memory implements Memory::backward (the gradient of its reads with
    /// respect to keys and queries), checked against finite differences by the tests:
    /// assoc_recall:keys=learned trains a key table through it; others are refused.
    bool backward = false;
    /// True when the memory implements Memory::causal_backward (∂L/∂ queries, keys, values and
    /// gate inputs of its causal form), checked against finite differences by the tests: the
    /// trained frame (harness/train/) trains a layer around it; others are refused.
    bool causal_backward = false;
    /// The trained frame's gates for this memory (LayerGates); default: none, with an output norm.
    LayerGates layer;
    /// True when the memory can hold its state at a storage precision other than fp32
    /// (memories/precision.hpp): it gives Memory::mutable_state, or its state grows by one
    /// [key | value] row a write. Every entry takes the key `precision` (added by the table);
    /// precision=bf16, fp16, int8 or int4 is refused for an entry without this trait.
    bool reduced_precision = false;
    /// True for a built-in entry whose state is already a compressed format that no storage
    /// precision may round again (KIVI's codes, MLA's latents): the table does not give it
    /// reduced_precision, which it gives every other built-in entry but the attention-scored caches.
    bool fp32_only = false;
    /// True at shapes where the built memory takes codes as spectra (SpectralMemory,
    /// memories/hrr/hrr.hpp): a task that draws its codes in the Fourier domain is then read a
    /// code at a time, never materialised (HRR at D = d). Empty: never.
    std::function<bool(const Spec&, const MemoryShape&)> takes_spectra;

    /// The theory of its recall (memories/theory/): given the memory spec, its size at
    /// `shape` from `size`, the shape and the task's side of one assoc_recall read, the
    /// model that describes it (RecallModel: which, whether it applies, its call), or none
    /// when the row is not covered. Empty: no model describes this backend. `memcap theory`
    /// asks it for every summary row (through recall_model below).
    std::function<std::optional<theory::RecallModel>(const Spec&, const MemorySize&, const MemoryShape&,
                                                     const theory::RecallTask&)>
        recall_model;
    /// The theory of its recall of a recent pair in a long stream (recent_recall, one lag
    /// bucket; memories/theory/forgetting.hpp), or none when the row is not covered. Empty: no
    /// model (`memcap theory` asks it for every recent_recall row, through horizon_model below).
    std::function<std::optional<theory::RecallModel>(const Spec&, const MemorySize&, const MemoryShape&,
                                                     const theory::LagBucket&)>
        horizon_model;

    // ---- Names: how the reports name the memory (`memcap list --json`, read by scripts/memcap_report).
    /// The name of the published layer or model ("DeltaNet", "Mamba-2", "TTT-Linear"); empty: the
    /// backend's name is its only name.
    std::string published;
    /// The tables' name when it says more than `published` ("softmax cache = sliding-window attention",
    /// "linear attention (grid)"); empty: `published`, followed by the backend that is the same memory
    /// (`same_as`) when there is one: "DeltaNet (`delta` = `deltanet`)".
    std::string table_name;
    /// The name in the essays' words, for sentences ("delta rule", "linear grid", "softmax cache", "HRR");
    /// empty: none.
    std::string plain_name;
    /// True when a sentence puts "the" before the name ("the softmax cache", "the delta rule").
    bool article = false;
    /// Another backend that is this memory under another name (delta: "deltanet"); empty: none.
    std::string same_as;
    /// True for a cache, which keeps the written pairs (softmax, sliding_window): the reports set the
    /// fixed-state memories against it.
    bool cache = false;
    /// For a memory that is a network trained as it writes (test-time training: TTT, Titans), the
    /// layers of that network at the memory's defaults — TTT-Linear 1 (its state one matrix), TTT-MLP
    /// and Titans 2 (more than a matrix); 0 for every other memory. The reports set these memories
    /// (and among them those of two layers or more) against the matrix memories.
    int network_layers = 0;
    /// The memory this one becomes in a special case (`reduces_when`): GLA at alpha = 1 is the linear
    /// grid; empty: none.
    std::string reduces_to;
    std::string reduces_when;

    Schema schema() const { return {"memory", name, params}; }
    /// Smallest budget (floats) the backend `spec` can be built with for this shape.
    std::int64_t min_budget(const Spec& spec, const MemoryShape& shape) const { return size(spec, shape).min_budget; }
};

/// The memory spec keys of the trained frame (harness/train/): every entry takes them from the
/// table, as it takes `precision`. train = none (the memory as computed, the default) | layer (the
/// memory inside a layer trained on the task); train_lr (Adam's rate; left out: chosen on held-out
/// loss); train_steps (the cap on steps). All optional: left out, a spec's canonical form is as before.
inline constexpr const char* kTrainKey = "train";
inline constexpr const char* kTrainLrKey = "train_lr";
inline constexpr const char* kTrainStepsKey = "train_steps";
std::vector<ParamInfo> training_params();

/// Every backend: the table's, then the registered ones, in order. A deque, so
/// references to entries stay valid when a backend is registered.
const std::deque<MemoryEntry>& memory_registry();
/// Adds a backend defined outside the table (e.g. tests/example_backend.cpp). Refused
/// with UsageError: an empty name, a name that is not a spec name (letters, digits,
/// '_', '-'), a name already taken, parameter defaults that do not bind, a missing
/// sizing function (size) or factory (make). `cost` may be empty (no roofline, and no
/// temporaries in memory_peak_bytes). Register before any cell runs: lookups are not
/// synchronised with registration.
void register_memory(MemoryEntry entry);
/// Names of every backend, in table order.
std::vector<std::string> memory_names();
/// The entry called `name`; UsageError listing the known names otherwise.
const MemoryEntry& find_memory(const std::string& name);
/// Parses and binds a memory spec string (UsageError on any problem).
Spec parse_memory_spec(const std::string& text);
/// A divided memory's inner memory as spec text (mom's base, the hybrid's state): the value of
/// the outer spec's `inner_key` (a memory name), then every parameter the entry `outer_name`
/// declares that the outer spec holds, but for those in `own_keys` (the outer memory's own),
/// each passed on as `key=value`.
std::string inner_memory_text(const Spec& outer, const std::string& outer_name, const std::string& inner_key,
                              const std::set<std::string>& own_keys);

/// The sizing function of `spec`'s backend at `shape`, after the checks make_memory
/// makes (positive dimensions, a budget at or above the minimum): UsageError otherwise.
MemorySize memory_size(const Spec& spec, const MemoryShape& shape);
/// memory_size with `spec`'s entry already looked up (a resolved cell's).
MemorySize memory_size(const MemoryEntry& entry, const Spec& spec, const MemoryShape& shape);

/// Estimated peak bytes the memory `spec` at `shape` needs in a cell that writes
/// `writes` pairs (one write_batch) and then reads `reads` queries (one read_batch):
/// its state after the writes, its parameters and derived tables, plus the largest of
/// the temporaries of building it, of the batched write and of the batched read (the
/// cost model's scratch_bytes). Not counted: the task's episode, the readout (the
/// probe's design), allocator slack, the code. Saturates at INT64_MAX. Throws
/// UsageError as memory_size does. Meant for refusing cells that cannot fit up front.
std::int64_t memory_peak_bytes(const Spec& spec, const MemoryShape& shape, std::int64_t writes, std::int64_t reads);
/// memory_peak_bytes with `spec`'s entry and its memory_size at `shape` already known.
std::int64_t memory_peak_bytes(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                               std::int64_t writes, std::int64_t reads);

/// The recall model of the memory `spec` at `shape` on `task`: its entry's recall_model
/// given the size from its sizing function (entry.size; the budget is not checked against
/// the minimum), or none when the entry has no recall model.
std::optional<theory::RecallModel> recall_model(const Spec& spec, const MemoryShape& shape, const theory::RecallTask& task);
/// The horizon model of the memory `spec` at `shape` on one recent_recall bucket: its entry's
/// horizon_model at the size from its sizing function, or none when the entry has none.
std::optional<theory::RecallModel> horizon_model(const Spec& spec, const MemoryShape& shape, const theory::LagBucket& bucket);

/// One line for `memcap list`: the named dimensions, the state floats (per stored pair
/// and at most, for a growing cache) and the parameter floats, e.g.
/// "d_phi = 16; state 1024 floats; parameters 1024 floats".
std::string describe_size(const MemorySize& size);
/// One line for `memcap list`: `entry`'s zoology formula and zoology's count at d = 64 and
/// B = 1024 beside memcap's (empty when the entry has no zoology count).
std::string describe_zoology(const MemoryEntry& entry);

/// Refuses gate inputs `entry` does not declare (MemoryEntry::gates): UsageError with one line
/// naming the memory and the gate input. A per-channel decay's width is the memory's to check.
void check_gates(const MemoryEntry& entry, const TokenGates& gates);

/// Builds the memory `spec` for `shape`, checking the budget against the backend's
/// minimum. Its random parameters come from the stream (memory spec, d_key, d_value,
/// budget, seed), so they never depend on the task or on thread order. The built
/// memory's parameter and state floats must match its sizing function (else
/// std::logic_error: the backend's sizing and constructor disagree).
std::unique_ptr<Memory> make_memory(const Spec& spec, const MemoryShape& shape, std::uint64_t seed);
/// make_memory with `spec`'s entry and its memory_size at `shape` already known.
std::unique_ptr<Memory> make_memory(const MemoryEntry& entry, const MemorySize& size, const Spec& spec,
                                    const MemoryShape& shape, std::uint64_t seed);

}  // namespace memcap
