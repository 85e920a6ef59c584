// memcap/harness/exec/runner.cpp — see runner.hpp.
#include "harness/exec/runner.hpp"

#include "core/error.hpp"
#include "harness/eval/cell.hpp"
#include "harness/exec/progress.hpp"
#include "harness/eval/readout.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <omp.h>

#include <exception>
#include <set>

namespace memcap {

std::int64_t checked_grid_size(const std::vector<std::int64_t>& sizes, const std::string& what) {
    std::int64_t total = 1;
    for (const auto n : sizes) {
        if (n == 0) return 0;
        if (total > kMaxCells / n)
            throw UsageError(what + " has more than " + std::to_string(kMaxCells) +
                             " cells; split it or use fewer values (seeds, n, budgets, ...)");
        total *= n;
    }
    return total;
}

std::vector<CellSpec> expand_grid(const std::vector<Spec>& memories, const std::vector<Spec>& tasks,
                                  const std::vector<std::optional<std::int64_t>>& budgets,
                                  const std::vector<std::int64_t>& ns, std::int64_t seeds, int d,
                                  const Spec& readout) {
    const auto size = [](const auto& v) { return static_cast<std::int64_t>(v.size()); };
    std::vector<CellSpec> cells;
    cells.reserve(static_cast<std::size_t>(checked_grid_size(
        {size(memories), size(tasks), size(budgets), size(ns), seeds}, "the grid (memories x tasks x budgets x n x seeds)")));
    for (const auto& task : tasks)
        for (const auto& memory : memories)
            for (const auto& budget : budgets)
                for (const auto n : ns)
                    for (std::int64_t seed = 0; seed < seeds; ++seed)
                        cells.push_back({memory, task, readout, budget, d, n, static_cast<std::uint64_t>(seed)});
    return cells;
}

void check_buildable(const std::vector<CellSpec>& cells) {
    std::set<std::string> checked;
    for (const auto& c : cells) {
        const std::string key = c.memory.canonical() + "|" + c.task.canonical() + "|" + c.readout.canonical() + "|" +
                                std::to_string(c.budget_floats.value_or(-1)) + "|" + std::to_string(c.d);
        if (!checked.insert(key).second) continue;
        const auto task = make_task(c.task);
        const MemoryShape shape(task->inputs(TaskCell{c.n, c.d, c.seed}), c.budget_floats);
        const auto memory = make_memory(c.memory, shape, c.seed);  // throws UsageError naming the problem
        check_combination(*task, c.task, c.memory, resolve_readout(c.readout, c.memory.name()));
    }
}

void run_cells(const std::vector<CellSpec>& cells, int threads, bool progress,
               const std::function<void(std::size_t, const std::string&)>& emit) {
    const auto count = static_cast<std::int64_t>(cells.size());
    std::vector<std::string> rows(cells.size());
    std::vector<char> done(cells.size(), 0);
    Progress bar(count, "memcap", progress);
    std::size_t next_emit = 0;
    auto flush_ready = [&] {
        while (next_emit < cells.size() && done[next_emit]) {
            emit(next_emit, rows[next_emit]);
            rows[next_emit].clear();
            rows[next_emit].shrink_to_fit();
            ++next_emit;
        }
    };
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t i = 0; i < count; ++i) {
        const auto idx = static_cast<std::size_t>(i);
        std::string text = csv_rows(cells[idx], run_cell(cells[idx]));
#pragma omp critical(memcap_rows)
        {
            rows[idx] = std::move(text);
            done[idx] = 1;
            if (omp_get_thread_num() == 0) flush_ready();
        }
        bar.tick();
    }
    flush_ready();
    bar.finish();
}

void run_cells_unordered(const std::vector<CellSpec>& cells, const std::vector<std::size_t>& order, int threads,
                         const std::atomic<bool>& stop,
                         const std::function<void(std::size_t, const std::string&)>& done) {
    const auto count = static_cast<std::int64_t>(order.size());
    std::exception_ptr failure;  // the first exception from `done` (e.g. a failed write), rethrown below
    std::atomic<bool> failed{false};
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t k = 0; k < count; ++k) {
        if (stop.load() || failed.load()) continue;
        const std::size_t idx = order[static_cast<std::size_t>(k)];
        const std::string text = csv_rows(cells[idx], run_cell(cells[idx]));
#pragma omp critical(memcap_rows)
        {
            if (!failed.load()) try {
                    done(idx, text);
                } catch (...) {
                    failure = std::current_exception();
                    failed = true;
                }
        }
    }
    if (failure) std::rethrow_exception(failure);
}

}  // namespace memcap
