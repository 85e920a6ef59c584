// memcap/memories/registry.cpp — the generic functions of the backend table, and its one list.
//
// Each built-in backend is a folder, memories/<name>/, whose entry.cpp defines
// `MemoryEntry <name>_entry()`; the list below is the table, in order. Adding a
// backend: its folder, its line here, its files in CMakeLists.txt, its row in
// memories/README.md.
#include "memories/registry.hpp"

#include "core/error.hpp"
#include "memories/heads.hpp"
#include "memories/hybrid/hybrid.hpp"
#include "memories/mom/mom.hpp"
#include "memories/precision.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace memcap {

// The built-in backends (memories/<name>/entry.cpp).
MemoryEntry softmax_entry();
MemoryEntry linear_entry();
MemoryEntry delta_entry();
MemoryEntry hrr_entry();
MemoryEntry rotation_entry();
MemoryEntry selective_entry();
MemoryEntry sliding_window_entry();
MemoryEntry deltanet_entry();
MemoryEntry mamba2_entry();
MemoryEntry retnet_entry();
MemoryEntry gla_entry();
MemoryEntry gated_deltanet_entry();
MemoryEntry kda_entry();
MemoryEntry rwkv7_entry();
MemoryEntry mesanet_entry();
MemoryEntry based_entry();
MemoryEntry ttt_linear_entry();
MemoryEntry ttt_mlp_entry();
MemoryEntry titans_entry();
MemoryEntry mlstm_entry();
MemoryEntry performer_entry();
MemoryEntry cosformer_entry();
MemoryEntry deltaproduct_entry();
MemoryEntry comba_entry();
MemoryEntry fox_entry();
MemoryEntry mamba3_entry();
MemoryEntry gsa_entry();
MemoryEntry sink_cache_entry();
MemoryEntry h2o_entry();
MemoryEntry tova_entry();
MemoryEntry snapkv_entry();
MemoryEntry knorm_entry();
MemoryEntry random_evict_entry();
MemoryEntry kv_merge_entry();
MemoryEntry loglinear_entry();
MemoryEntry kivi_entry();
MemoryEntry mla_entry();

namespace {

std::vector<MemoryEntry> build_registry() {
    std::vector<MemoryEntry> table;
    table.push_back(softmax_entry());
    table.push_back(linear_entry());
    table.push_back(delta_entry());
    table.push_back(hrr_entry());
    table.push_back(rotation_entry());
    table.push_back(selective_entry());
    table.push_back(sliding_window_entry());
    table.push_back(deltanet_entry());
    table.push_back(mamba2_entry());
    table.push_back(retnet_entry());
    table.push_back(gla_entry());
    table.push_back(gated_deltanet_entry());
    table.push_back(kda_entry());
    table.push_back(rwkv7_entry());
    table.push_back(mesanet_entry());
    table.push_back(based_entry());
    table.push_back(ttt_linear_entry());
    table.push_back(ttt_mlp_entry());
    table.push_back(titans_entry());
    table.push_back(mlstm_entry());
    table.push_back(performer_entry());
    table.push_back(cosformer_entry());
    table.push_back(deltaproduct_entry());
    table.push_back(comba_entry());
    table.push_back(fox_entry());
    table.push_back(mamba3_entry());
    table.push_back(gsa_entry());
    table.push_back(sink_cache_entry());  // the softmax cache's KV policies (memories/softmax/kv_policy.hpp)
    table.push_back(h2o_entry());
    table.push_back(tova_entry());
    table.push_back(snapkv_entry());
    table.push_back(knorm_entry());
    table.push_back(random_evict_entry());
    table.push_back(kv_merge_entry());
    table.push_back(loglinear_entry());
    table.push_back(kivi_entry());  // caches keeping each pair in fewer floats (memories/softmax/compressed_cache.hpp)
    table.push_back(mla_entry());
    return table;
}

/// True when a memory of this size grows by one [key | value] row a write (its rows are
/// rounded as written; precision.hpp).
bool grows_by_rows(const MemorySize& s, const MemoryShape& shape) {
    return s.floats_per_write > 0 && s.floats_per_write == std::int64_t{shape.d_key} + shape.d_value;
}

/// `shape` with its budget (floats, kBitsPerFloat each) turned into the numbers of state it buys at
/// `p`: whole rows for a growing memory, flat_elements otherwise. `at32` is the size at fp32.
MemoryShape stored_shape(const MemorySize& at32, const MemoryShape& shape, Precision p) {
    MemoryShape out = shape;
    if (!shape.budget_floats) return out;
    const std::int64_t bits = budget_bits(*shape.budget_floats);
    if (grows_by_rows(at32, shape))
        out.budget_floats = bits / row_bits(p, shape.d_key, shape.d_value) * at32.floats_per_write;
    else
        out.budget_floats = flat_elements(p, bits);
    return out;
}

/// Gives `e` the key `precision` and makes its sizing function, factory and cost model honour
/// it (memories/precision.hpp): a budget buys as many numbers as its bits hold at that
/// precision, and the memory built is held at it. fp32 (or no precision) is the entry as it was.
/// No theory models rounding, and codes are not streamed as spectra into a rounded memory.
void add_precision(MemoryEntry& e) {
    for (const auto& p : e.params)
        if (p.key == kPrecisionKey)
            throw UsageError("register_memory: memory '" + e.name + "' declares '" + kPrecisionKey +
                             "', a key every memory takes from the table (memories/precision.hpp)");
    e.params.push_back(precision_param());
    const std::string name = e.name;
    const bool able = e.reduced_precision;
    auto size = e.size;
    const auto at = [size, name, able](const Spec& spec, const MemoryShape& shape, Precision p) {
        if (!able)
            throw UsageError("memory '" + name + "' cannot hold its state at " + precision_name(p) +
                             ": it gives no writable view of its state (its table entry does not declare reduced_precision)");
        return stored_shape(size(spec, shape), shape, p);
    };
    e.size = [size, at](const Spec& spec, const MemoryShape& shape) {
        const Precision p = spec_precision(spec);
        if (p == Precision::fp32) return size(spec, shape);
        const MemoryShape stored = at(spec, shape, p);
        MemorySize s = size(spec, stored);
        // The smallest budget whose bits hold the minimum's numbers.
        const std::int64_t min_bits = grows_by_rows(s, shape)
                                          ? s.min_budget / s.floats_per_write * row_bits(p, shape.d_key, shape.d_value)
                                          : flat_bits(p, s.min_budget);
        s.min_budget = budget_holding(min_bits);
        return s;
    };
    auto make = e.make;
    e.make = [make, size, at](const Spec& spec, const MemoryShape& shape, Rng& rng) {
        const Precision p = spec_precision(spec);
        if (p == Precision::fp32) return make(spec, shape, rng);
        const bool grows = grows_by_rows(size(spec, shape), shape);
        return with_precision(make(spec, at(spec, shape, p), rng), p, grows);
    };
    if (e.cost) {
        auto cost = e.cost;
        e.cost = [cost, at](const Spec& spec, const MemoryShape& shape, Kernel k, std::int64_t stored, std::int64_t batch) {
            const Precision p = spec_precision(spec);
            return cost(spec, p == Precision::fp32 ? shape : at(spec, shape, p), k, stored, batch);
        };
    }
    if (e.takes_spectra) {  // at another precision, as the wrapper built at its shape does (state rounded whole)
        auto spectra = e.takes_spectra;
        e.takes_spectra = [spectra, size, at](const Spec& spec, const MemoryShape& shape) {
            const Precision p = spec_precision(spec);
            if (p == Precision::fp32) return spectra(spec, shape);
            if (grows_by_rows(size(spec, shape), shape)) return false;
            return spectra(spec, at(spec, shape, p));
        };
    }
    // The recall and horizon models describe the memory as computed: none at another precision.
    const auto fp32_only = [](auto model) {
        return [model](const Spec& spec, const MemorySize& s, const MemoryShape& shape, const auto& task)
                   -> std::optional<theory::RecallModel> {
            if (spec_precision(spec) != Precision::fp32) return std::nullopt;
            return model(spec, s, shape, task);
        };
    };
    if (e.recall_model) e.recall_model = fp32_only(e.recall_model);
    if (e.horizon_model) e.horizon_model = fp32_only(e.horizon_model);
}

/// Gives `e` the trained frame's keys (training_params), refusing an entry that declares one itself.
void add_training(MemoryEntry& e) {
    for (const auto& t : training_params())
        for (const auto& p : e.params)
            if (p.key == t.key)
                throw UsageError("register_memory: memory '" + e.name + "' declares '" + t.key +
                                 "', a key every memory takes from the table (the trained frame, harness/train/)");
    for (auto& t : training_params()) e.params.push_back(std::move(t));
}

std::deque<MemoryEntry>& registry_storage() {
    static std::deque<MemoryEntry> registry = [] {
        std::vector<MemoryEntry> table = build_registry();
        // The divided memories (memories/hybrid/): their parts are entries of the table above, so
        // they follow it; their state is their parts', held at fp32 only (no reduced_precision).
        std::vector<MemoryEntry> divided = {hybrid_entry(table), mom_entry(table)};
        for (auto& e : table) {
            // every built-in backend: mutable_state, or a cache's rows; but a KV policy scored by
            // attention, whose rows carry scores and positions no storage precision may round, and a
            // cache whose state is already compressed (fp32_only)
            e.reduced_precision = !e.reads_steer_writes && !e.fp32_only;
            add_precision(e);
            if (e.splits_into_heads) add_heads(e);
            add_training(e);
        }
        for (auto& e : divided) {
            add_precision(e);
            if (e.splits_into_heads) add_heads(e);
            add_training(e);
            table.push_back(std::move(e));
        }
        return std::deque<MemoryEntry>(std::make_move_iterator(table.begin()), std::make_move_iterator(table.end()));
    }();
    return registry;
}

}  // namespace

std::vector<ParamInfo> training_params() {
    ParamInfo mode = optional_param(choice_param(kTrainKey, {"none", "layer"},
                                                 "the trained frame: none = the memory as computed (untrained); layer = inside a "
                                                 "layer trained on the task (projections, short conv, the family's gates; docs/training.md)"));
    mode.same_as_none = "none";
    ParamInfo lr = optional_param(real_param(kTrainLrKey, "0.003",
                                             "Adam learning rate of train=layer (left out: of 0.001 0.003 0.01, the best on a tuning seed's held-out loss)",
                                             0.0, true));
    ParamInfo steps = optional_param(int_param(kTrainStepsKey, "3000", "cap on train=layer's Adam steps (left out: 3000)", 1));
    return {mode, lr, steps};
}

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
    add_precision(entry);
    add_training(entry);
    bind_spec(entry.schema(), raw);  // every parameter's default binds (UsageError naming it otherwise)
    for (const auto& p : entry.params)  // and the value that means left out is one it accepts
        if (!p.same_as_none.empty()) {
            try {
                bind_spec(entry.schema(), RawSpec{entry.name, {{p.key, p.same_as_none}}});
            } catch (const UsageError& err) {
                throw UsageError("register_memory: memory '" + entry.name + "': " + p.key + "'s value meaning left out, '" +
                                 p.same_as_none + "', is not one it accepts (" + err.what() + ")");
            }
        }
    registry_storage().push_back(std::move(entry));
}

std::vector<std::string> memory_names() {
    std::vector<std::string> names;
    for (const auto& e : memory_registry()) names.push_back(e.name);
    return names;
}

std::string inner_memory_text(const Spec& outer, const std::string& outer_name, const std::string& inner_key,
                              const std::set<std::string>& own_keys) {
    std::string text = outer.text(inner_key);
    std::string sep = ":";
    for (const ParamInfo& p : find_memory(outer_name).params) {
        if (own_keys.count(p.key) || !outer.has(p.key)) continue;
        text += sep + p.key + "=" + outer.text(p.key);
        sep = ",";
    }
    return text;
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

double batch_bytes(const MemoryShape& s, std::int64_t batch) { return 4.0 * double(batch) * (s.d_key + s.d_value); }

std::int64_t MemorySize::state_floats_after(std::int64_t writes) const {
    if (grows_as) return grows_as(writes);
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
    {
        // With a precision the budget is bits, and so is the minimum.
        const bool bits = spec.has(kPrecisionKey);
        const auto amount = [bits](std::int64_t floats) { return describe_budget(floats, bits); };
        throw UsageError("memory '" + spec.canonical() + "': budget " + amount(*shape.budget_floats) +
                         " is below its minimum of " + amount(size.min_budget) + " at d_k=" +
                         std::to_string(shape.d_key) + ", d_v=" + std::to_string(shape.d_value));
    }
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

std::int64_t MemorySize::dim(const std::string& name) const {
    for (const auto& [n, value] : dims)
        if (n == name) return value;
    throw std::logic_error("memory size: no dimension '" + name + "'");
}

std::optional<theory::RecallModel> recall_model(const Spec& spec, const MemoryShape& shape, const theory::RecallTask& task) {
    const MemoryEntry& entry = find_memory(spec.name());
    if (!entry.recall_model) return std::nullopt;
    return entry.recall_model(spec, entry.size(spec, shape), shape, task);
}

std::optional<theory::RecallModel> horizon_model(const Spec& spec, const MemoryShape& shape, const theory::LagBucket& bucket) {
    const MemoryEntry& entry = find_memory(spec.name());
    if (!entry.horizon_model) return std::nullopt;
    return entry.horizon_model(spec, entry.size(spec, shape), shape, bucket);
}

std::string describe_size(const MemorySize& size) {
    const auto floats = [](std::int64_t x) { return std::to_string(x) + (x == 1 ? " float" : " floats"); };
    std::string out;
    for (const auto& [name, value] : size.dims)
        out += (out.empty() ? "" : ", ") + name + (value < 0 ? " unbounded" : " = " + std::to_string(value));
    out += out.empty() ? "" : "; ";
    if (size.floats_per_write == 0) out += "state " + floats(size.state_floats);
    else if (size.grows_as && size.state_floats < 0)
        out += "state " + floats(size.floats_per_write) + " a pair at full precision, fewer once quantised, unbounded";
    else if (size.grows_as)
        out += "state up to " + floats(size.state_floats) + " (" + std::to_string(size.floats_per_write) +
               " a pair at full precision, fewer once quantised)";
    else if (size.state_floats < 0) out += "state " + floats(size.floats_per_write) + " per write, unbounded";
    else out += "state up to " + floats(size.state_floats) + " (" + std::to_string(size.floats_per_write) + " per write)";
    out += "; parameters " + floats(size.param_floats);
    if (size.derived_floats > 0) out += " (+ " + floats(size.derived_floats) + " derived from them)";
    return out;
}

std::string describe_zoology(const MemoryEntry& entry) {
    if (!entry.zoology) return "";
    MemoryShape shape;
    shape.budget_floats = 1024;
    const MemorySize size = memory_size(parse_memory_spec(entry.name), shape);
    return entry.zoology->formula + "; at d=64, B=1024: " + std::to_string(entry.zoology->floats(size, shape)) +
           " floats (memcap: " + std::to_string(size.state_floats) + ")";
}

void check_gates(const MemoryEntry& entry, const TokenGates& gates) {
    const auto refuse = [&](const std::string& what) {
        throw UsageError("memory '" + entry.name + "' takes no per-token " + what + " (its table entry does not declare it)");
    };
    const GateInputs& g = entry.gates;
    if (gates.log_decay.size() > 0) {
        if (gates.log_decay.cols() == 1 && !g.log_decay) refuse("decay");
        if (gates.log_decay.cols() > 1 && !g.channel_decay) refuse("per-channel decay");
    }
    if (gates.beta.size() > 0 && !g.beta) refuse("write strength beta");
    if (gates.write_gate.size() > 0 && !g.write_gate) refuse("write gate");
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
