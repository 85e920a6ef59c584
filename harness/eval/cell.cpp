// memcap/harness/eval/cell.cpp — see cell.hpp.
#include "harness/eval/cell.hpp"

#include "core/error.hpp"
#include "harness/eval/readout.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <algorithm>

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

std::string cell_label(const CellSpec& c) { return group_label(c) + " seed=" + std::to_string(c.seed); }

std::unique_ptr<Memory> build_memory(const CellSpec& c, const Task& task) {
    MemoryShape shape = task.shape(TaskCell{c.n, c.d, c.seed});
    shape.budget_floats = c.budget_floats;
    shape.positional_keys = task.positional_keys();
    return make_memory(c.memory, shape, c.seed);  // UsageError naming a budget below the minimum
}

double cell_work(const CellSpec& c) {
    const auto task = make_task(c.task);
    const TaskCell tc{c.n, c.d, c.seed};
    const double state = static_cast<double>(c.budget_floats.value_or(std::int64_t{c.d} * c.d));
    double work = static_cast<double>(c.n) * state * static_cast<double>(task->test_episodes(tc));
    if (c.readout.name() == "probe") work += static_cast<double>(c.n) * state * static_cast<double>(c.readout.integer("train"));
    return std::max(work, 1.0);
}

void check_cell(const CellSpec& c) {
    const auto task = make_task(c.task);
    const auto memory = build_memory(c, *task);
    if (!task->hides_pairs()) return;
    if (!memory->supports_hiding())
        throw UsageError("task '" + c.task.canonical() + "' hides the asked-for pair from each read, which needs a memory " +
                         "that keeps its pairs apart (softmax); memory '" + c.memory.name() + "' does not");
    if (!find_readout(c.readout.name()).uses_native_read)
        throw UsageError("task '" + c.task.canonical() + "' needs the native readout (the probe reads the whole state " +
                         "and cannot hide a pair); got readout '" + c.readout.canonical() + "'");
}

CellResult run_cell(const CellSpec& c) {
    const auto task = make_task(c.task);
    const TaskCell tc{c.n, c.d, c.seed};
    auto memory = build_memory(c, *task);
    return cell_result(c, find_readout(c.readout.name()).score(*memory, *task, tc, c.readout), task->chance(tc));
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
    return r;
}

}  // namespace memcap
