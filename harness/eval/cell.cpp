// memcap/harness/eval/cell.cpp — see cell.hpp.
#include "harness/eval/cell.hpp"

#include "core/error.hpp"
#include "harness/eval/abstention.hpp"
#include "harness/eval/key_training.hpp"
#include "harness/eval/readout.hpp"
#include "harness/train/trainer.hpp"
#include "memories/precision.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <new>
#include <tuple>

#include <unistd.h>

namespace memcap {

CellSpec make_cell(const Spec& memory, const Spec& task, const Spec& readout, std::optional<std::int64_t> budget_floats,
                   int d, std::int64_t n, std::uint64_t seed) {
    CellSpec c;
    c.memory = memory, c.task = task, c.readout = resolve_readout(readout, memory.name());
    c.budget_floats = budget_floats, c.d = d, c.n = n, c.seed = seed;
    return c;
}

std::string group_label(const CellSpec& c) {
    return c.memory.canonical() + " " + c.task.canonical() + " readout=" + c.readout.canonical() +
           " budget=" + (c.budget_floats ? std::to_string(*c.budget_floats) : std::string("natural")) +
           " d=" + (c.needs_tuning() && c.d == 0 ? std::string("best") : std::to_string(c.d)) + " n=" + std::to_string(c.n);
}

namespace {

/// The fields of a cell's group but its specs (compared by their canonical form): every field but the seed.
auto group_fields(const CellSpec& c) { return std::tie(c.n, c.d, c.budget_floats, c.tuning_seeds, c.d_candidates, c.tuned); }

}  // namespace

bool same_but_seed(const CellSpec& a, const CellSpec& b) {
    return group_fields(a) == group_fields(b) && a.memory == b.memory && a.task == b.task && a.readout == b.readout;
}

bool SameGroupOrder::operator()(const CellSpec& a, const CellSpec& b) const {
    if (group_fields(a) != group_fields(b)) return group_fields(a) < group_fields(b);
    for (const auto spec : {&CellSpec::memory, &CellSpec::task, &CellSpec::readout})
        if (!((a.*spec) == (b.*spec))) return (a.*spec).canonical() < (b.*spec).canonical();
    return false;
}

std::string cell_label(const CellSpec& c) { return group_label(c) + " seed=" + std::to_string(c.seed); }

std::unique_ptr<Memory> build_memory(const CellSpec& c, const Task& task) {
    const MemoryShape shape(task.inputs(TaskCell{c.n, c.d, c.seed}), c.budget_floats);
    return make_memory(c.memory, shape, c.seed);  // UsageError naming a budget below the minimum
}

namespace {

/// Bytes of memory this machine has (physical pages × page size).
double physical_bytes() {
    return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
}

/// Lists the backends with a trait, for messages.
template <class Has>
std::string able(Has has) {
    std::string out;
    for (const auto& e : memory_registry())
        if (has(e)) out += (out.empty() ? "" : ", ") + e.name;
    return out;
}

}  // namespace

std::shared_ptr<const ResolvedCell> resolve_cell(const CellSpec& c, bool checks) {
    auto r = std::make_shared<ResolvedCell>();
    r->cell = c;
    r->memory = &find_memory(c.memory.name());
    r->readout = &find_readout(c.readout.name());
    auto task = make_task(c.task);
    const Task& t = *task;
    r->task = std::move(task);
    const MemoryEntry& memory = *r->memory;
    const ReadoutEntry& readout = *r->readout;
    const TaskCell tc = r->at(c.seed);
    if (checks) t.check(tc);  // UsageError: a task that cannot be posed at this n or d
    r->shape = MemoryShape(t.inputs(tc), c.budget_floats);
    // Streamed (readout.hpp: codes drawn in the Fourier domain, a memory that takes spectra):
    // the cell never holds its episode, nor the reads of the batched read, only the readout's
    // buffers (which hold the reads' spectra).
    r->streams = memory.takes_spectra && readout.uses_native_read && t.hops() == 1 && !t.has_absent() &&
                 memory.takes_spectra(c.memory, r->shape) && t.spectral_episode(tc, Split::Test, 0);
    r->size = memory_size(memory, c.memory, r->shape);  // refuses a budget below the minimum
    if (r->streams)
        r->peak_bytes = static_cast<double>(memory_peak_bytes(memory, r->size, c.memory, r->shape, c.n, 0)) +
                        spectral_episode_peak_bytes(c.n, c.d, t.queries_per_episode(tc));
    else
        r->peak_bytes = static_cast<double>(memory_peak_bytes(memory, r->size, c.memory, r->shape, t.writes_per_episode(tc), t.queries_per_episode(tc))) +
                        static_cast<double>(t.peak_bytes(tc));
    if (!checks) return r;
    if (t.needs_native_read() && !readout.uses_native_read)
        throw UsageError("task '" + c.task.canonical() + "' " +
                         (t.hops() > 1 ? "chains reads (each read is the next query)"
                          : t.has_absent() ? "decides from each read whether nothing fits" : t.native_read_reason()) +
                         ", which needs the memory's own read; got readout '" + c.readout.canonical() + "'" +
                         (memory.native_read ? std::string()
                                             : " (memory '" + c.memory.name() + "' has no meaningful read of its own)"));
    if (train::trained(c.memory)) {
        train::check_trainable(memory, c.memory, t);  // UsageError: no causal backward, not a token task
        if (!readout.uses_native_read)
            throw UsageError("memory '" + c.memory.canonical() + "': train=layer is scored by its own layer's reads; " +
                             "it needs the native readout, got '" + c.readout.canonical() + "'");
    }
    if (t.key_training()) {
        if (spec_precision(c.memory) != Precision::fp32)
            throw UsageError("task '" + c.task.canonical() + "' trains its keys through the memory's backward pass, " +
                             "which differentiates its fp32 state; memory '" + c.memory.canonical() +
                             "' holds it at " + c.memory.text(kPrecisionKey) + " (leave precision out)");
        if (!memory.backward)
            throw UsageError("task '" + c.task.canonical() + "' trains its keys through the memory's backward pass, " +
                             "which memory '" + c.memory.name() + "' does not declare (memories with one: " +
                             able([](const MemoryEntry& e) { return e.backward; }) + ")");
        if (!readout.uses_native_read)
            throw UsageError("task '" + c.task.canonical() + "' trains its keys through the memory's own read and is " +
                             "scored by it: it needs the native readout, got '" + c.readout.canonical() + "'");
    }
    if (!t.hides_pairs()) return r;
    if (!memory.can_hide_pairs)
        throw UsageError("task '" + c.task.canonical() + "' hides the asked-for pair from each read, which needs a memory " +
                         "that keeps its pairs apart (" + able([](const MemoryEntry& e) { return e.can_hide_pairs; }) +
                         "); memory '" + c.memory.name() + "' does not");
    if (!readout.uses_native_read)
        throw UsageError("task '" + c.task.canonical() + "' needs the native readout (the probe reads the whole state " +
                         "and cannot hide a pair); got readout '" + c.readout.canonical() + "'");
    return r;
}

void check_fits(const ResolvedCell& r) {
    const double have = physical_bytes(), need = r.peak_bytes;
    if (have > 0 && need > 0.8 * have) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.3g GB, more than 80%% of this machine's %.3g GB", need / 1e9, have / 1e9);
        throw UsageError("cell (" + cell_label(r.cell) + ") needs about " + buf + "; lower n, d or the budget");
    }
}

double cell_work(const ResolvedCell& r, std::uint64_t seed) {
    const CellSpec& c = r.cell;
    const Task& task = *r.task;
    const TaskCell tc = r.at(seed);
    const double state = static_cast<double>(c.budget_floats.value_or(std::int64_t{c.d} * c.d));
    const double episodes = static_cast<double>(task.test_episodes(tc));
    const double writes = static_cast<double>(task.writes_per_episode(tc));
    double work = writes * state * episodes;
    // With a cost model: the FLOPs of the batched write and read per episode, the native
    // read's cleanup (each query against the n values) and the parameters drawn — closer
    // to the time a cell takes where the width changes the cost (maps, FFTs), so the
    // progress estimate swings less.
    const MemoryEntry& entry = *r.memory;
    if (entry.cost) try {
            const MemoryShape& shape = r.shape;
            const MemorySize& size = r.size;
            const double queries = static_cast<double>(task.queries_per_episode(tc));
            if (r.streams) {
                // 3 n d normals (keys, values, and the candidates drawn again), each about as long
                // as 60 FLOPs of the kernels, and the reads against every candidate, 2 m n d
                constexpr double kNormalFlops = 60;
                return episodes * static_cast<double>(c.n) * c.d * (3.0 * kNormalFlops + 2.0 * queries + 8.0);
            }
            const std::int64_t w = task.writes_per_episode(tc);
            work = episodes * (entry.cost(c.memory, shape, Kernel::write_batch, 0, w).flops +
                               entry.cost(c.memory, shape, Kernel::read_batch, w, task.queries_per_episode(tc)).flops +
                               2.0 * queries * writes * shape.d_value + 5.0 * writes * (shape.d_key + shape.d_value)) +
                   10.0 * static_cast<double>(size.param_floats + size.derived_floats);
        } catch (const UsageError&) {
            // keep the rough measure
        }
    work *= (task.has_absent() ? 1.0 + kThresholdSeeds : 1.0) *  // the threshold's tuning seeds
            static_cast<double>(task.hops());                      // a chain reads hops rounds
    if (const auto training = task.key_training())  // forward and backward of every training episode
        work += 3.0 * writes * state * static_cast<double>(training->steps);
    if (c.readout.name() == "probe") work += writes * state * static_cast<double>(c.readout.integer("train"));
    if (train::trained(c.memory))  // the model's training (shared by the cells of other n): forward and backward per episode
        work += 4.0 * writes * state * static_cast<double>(train::TrainSettings::of(c.memory).max_steps) * 16.0 / 4.0;
    return std::max(work, 1.0);
}

bool shares_episode(const ResolvedCell& r, std::uint64_t seed) {
    return r.readout->uses_native_read && r.task->test_episodes(r.at(seed)) == 1 && !r.task->key_training() &&
           !train::trained(r.cell.memory);  // a trained memory is read through its layer  // a trained task's episodes depend on the keys trained through the memory
}

std::string shared_episode_key(const ResolvedCell& r, std::uint64_t seed) {
    if (!shares_episode(r, seed)) return {};
    const CellSpec& c = r.cell;
    return c.task.canonical() + " n=" + std::to_string(c.n) + " d=" + std::to_string(c.d) + " seed=" + std::to_string(seed);
}

void check_cell(const CellSpec& c) { check_fits(*resolve_cell(c)); }

double check_cell_structure(const CellSpec& c) { return resolve_cell(c)->peak_bytes; }

namespace {

/// The readout's score of `memory`, with a MemoryFailure (memories/memory.hpp: an online
/// network whose weights diverged) turned into a failed outcome naming it: an error row.
CellOutcome score_memory(const ResolvedCell& rc, Memory& memory, const Task& task, const TaskCell& tc, const Spec& readout) {
    try {
        return rc.readout->score(memory, task, tc, readout);
    } catch (const MemoryFailure& e) {
        CellOutcome failed;
        failed.ok = false;
        failed.message = e.what();
        failed.state_floats = memory.state_floats();
        failed.param_floats = memory.param_floats();
        return failed;
    }
}

/// The cell's "nothing fits" scores: the threshold chosen on the tuning seeds' decisions
/// (abstention.hpp), applied to the scored seed's. A tuning seed that fails fails the cell.
void add_abstention(const ResolvedCell& rc, const Task& task, CellResult& r) {
    std::vector<Decision> tuning;
    for (int s = 0; s < kThresholdSeeds; ++s) {
        const std::uint64_t seed = kThresholdSeedBase + static_cast<std::uint64_t>(s);
        auto memory = make_memory(*rc.memory, rc.size, rc.cell.memory, rc.shape, seed);
        const CellOutcome o = score_memory(rc, *memory, task, rc.at(seed), rc.cell.readout);
        if (!o.ok) {
            r.ok = false;
            r.message = "threshold tuning seed " + std::to_string(s) + ": " + o.message;
            return;
        }
        tuning.insert(tuning.end(), o.decisions.begin(), o.decisions.end());
    }
    r.abstention = score_abstention(r.decisions, choose_threshold(tuning));
    r.decisions = {};
}

}  // namespace

CellResult run_cell(const CellSpec& c) {
    std::shared_ptr<const ResolvedCell> r;
    try {
        r = resolve_cell(c, false);  // run as asked: the checks are the caller's (check_cells)
    } catch (const std::bad_alloc&) {
        throw OutOfMemory(c);
    }
    return run_cell(*r, c);
}

CellResult run_cell(const ResolvedCell& rc, const CellSpec& c) {
    const std::uint64_t seed = c.seed;
    try {
        const auto task = make_task(c.task);  // the cell's own: a task keeps the last cell's codes
        const TaskCell tc = rc.at(seed);
        if (train::trained(c.memory)) {  // the trained frame: the model of (memory, budget, d, task, seed), scored here
            CellResult r = cell_result(c, train::score_trained(*rc.memory, rc.size, c.memory, rc.shape, *task, tc), task->chance(tc));
            r.state_bits = state_bits(spec_precision(c.memory), rc.size, rc.shape, r.state_floats);
            return r;
        }
        auto memory = make_memory(*rc.memory, rc.size, c.memory, rc.shape, seed);
        if (task->key_training()) {  // train the key table on training episodes, then score as any cell
            const TrainedKeys keys = train_keys(*memory, *task, tc);
            if (!keys.ok) {
                CellOutcome failed;
                failed.ok = false;
                failed.message = keys.message;
                failed.state_floats = memory->state_floats();
                failed.param_floats = memory->param_floats();
                return cell_result(c, std::move(failed), task->chance(tc));
            }
        }
        CellResult r = cell_result(c, score_memory(rc, *memory, *task, tc, c.readout), task->chance(tc));
        r.state_bits = state_bits(spec_precision(c.memory), rc.size, rc.shape, r.state_floats);
        if (r.ok && task->has_absent()) add_abstention(rc, *task, r);
        return r;
    } catch (const std::bad_alloc&) {
        throw OutOfMemory(c, rc.peak_bytes);
    }
}

OutOfMemory::OutOfMemory(const CellSpec& c) : UsageError(message(c)) {}
OutOfMemory::OutOfMemory(const CellSpec& c, double peak_bytes) : UsageError(message(c, peak_bytes)) {}

std::string OutOfMemory::message(const CellSpec& c) {
    double need = 0;
    try {
        need = check_cell_structure(c);
    } catch (...) {
        need = 0;  // no estimate: say so below
    }
    return message(c, need);
}

std::string OutOfMemory::message(const CellSpec& c, double need) {
    char buf[96];
    if (need > 0) std::snprintf(buf, sizeof buf, "about %.3g GB", need / 1e9);
    else std::snprintf(buf, sizeof buf, "more than it could get");
    return "out of memory: cell (" + cell_label(c) + ") needs " + buf +
           " (estimated peak, per cell in flight) and could not allocate it; lower --threads (cells run at once), "
           "the budget, n or d";
}

CellResult cell_result(const CellSpec& c, CellOutcome outcome, double chance_frac) {
    CellResult r;
    static_cast<CellOutcome&>(r) = std::move(outcome);
    r.memory_spec = c.memory.canonical();
    r.task_spec = c.task.canonical();
    r.readout = c.readout.canonical();
    r.budget_floats = c.budget_floats;
    r.d = c.d;
    r.n = c.n;
    r.seed = c.seed;
    r.tuned = c.tuned;
    r.chance_frac = chance_frac;
    // Priced as a flat state; run_cell prices a growing cache's rows exactly (their scales).
    r.state_bits = flat_bits(spec_precision(c.memory), r.state_floats);
    return r;
}

}  // namespace memcap
