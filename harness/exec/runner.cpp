// memcap/harness/exec/runner.cpp — see runner.hpp.
#include "harness/exec/runner.hpp"

#include "harness/exec/memory_gate.hpp"
#include "harness/exec/progress.hpp"
#include "harness/results/csv.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace memcap {

std::string cell_text(const CellSpec& cell) {
    try {
        return cell_rows(run_cell(cell));
    } catch (const std::bad_alloc&) {
        throw OutOfMemory(cell);  // while writing its rows
    } catch (const UsageError&) {
        throw;  // out of memory: one line for the user, as it is
    } catch (const std::exception& e) {
        throw std::runtime_error("cell (" + cell_label(cell) + "): " + e.what());
    }
}

double estimated_peak(const CellSpec& cell) {
    try {
        return check_cell_structure(cell);
    } catch (const std::exception&) {
        return 0.0;  // checked before any work: a cell that cannot be estimated is refused there
    }
}

std::string progress_class(const CellSpec& cell) { return cell.memory.name() + " " + cell.readout.name(); }

WorkItems group_by_shared_episode(const std::vector<std::size_t>& indices,
                                  const std::function<const CellSpec&(std::size_t)>& cell_of) {
    WorkItems items;
    std::map<std::string, std::size_t> item_of;
    for (const std::size_t idx : indices) {
        const std::string key = shared_episode_key(cell_of(idx));
        if (key.empty()) {
            items.cells.push_back({idx});
            continue;
        }
        const auto [it, fresh] = item_of.try_emplace(key, items.cells.size());
        if (fresh) items.cells.emplace_back();
        items.cells[it->second].push_back(idx);
    }
    // A cell's estimate holds for every seed of its group (as check_cells assumes), so the
    // estimate of the cell before it in `indices` is reused when the two differ in the seed only.
    std::map<std::size_t, double> peak_of;
    for (std::size_t k = 0; k < indices.size(); ++k) {
        const CellSpec& c = cell_of(indices[k]);
        peak_of[indices[k]] = k > 0 && same_but_seed(c, cell_of(indices[k - 1])) ? peak_of[indices[k - 1]] : estimated_peak(c);
    }
    items.peak.assign(items.cells.size(), 0.0);
    for (std::size_t i = 0; i < items.cells.size(); ++i)
        for (const std::size_t idx : items.cells[i]) items.peak[i] = std::max(items.peak[i], peak_of[idx]);
    return items;
}

void run_cells(const std::vector<CellSpec>& cells, int threads, bool progress,
               const std::function<void(std::size_t, const std::string&)>& emit, const std::atomic<bool>* stop) {
    std::vector<std::string> rows(cells.size());
    std::vector<char> done(cells.size(), 0);
    std::vector<double> work(progress ? cells.size() : 0);
    for (std::size_t i = 0; i < work.size(); ++i) work[i] = cell_work(cells[i]);
    double total = 0;
    for (double w : work) total += w;
    Progress bar(static_cast<std::int64_t>(cells.size()), "memcap", progress, total);
    for (std::size_t i = 0; i < work.size(); ++i) bar.expect(progress_class(cells[i]), work[i]);
    bar.set_threads(threads);
    std::size_t next_emit = 0;
    auto flush_ready = [&] {
        while (next_emit < cells.size() && done[next_emit]) {
            emit(next_emit, rows[next_emit]);
            rows[next_emit].clear();
            rows[next_emit].shrink_to_fit();
            ++next_emit;
        }
    };
    std::vector<std::size_t> order(cells.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const std::atomic<bool> never{false};
    // emitting happens on the calling thread only: completed cells are parked until it is their turn
    run_cells_unordered(cells, order, threads, stop ? *stop : never, [&](std::size_t idx, const std::string& text, double seconds) {
        rows[idx] = text;
        done[idx] = 1;
        if (omp_get_thread_num() == 0) flush_ready();
        if (work.empty()) bar.tick(1, 1.0);
        else bar.tick(progress_class(cells[idx]), work[idx], seconds);
    });
    flush_ready();
    bar.finish();
}

void run_cells_unordered(const std::vector<CellSpec>& cells, const std::vector<std::size_t>& order, int threads,
                         const std::atomic<bool>& stop,
                         const std::function<void(std::size_t, const std::string&, double)>& done) {
    // Cells that read the same single test episode natively are one work item (so the
    // native readout draws their episode once, readout.cpp); every other cell, long ones
    // included (many episodes, the probe), is balanced across threads on its own.
    const WorkItems items = group_by_shared_episode(order, [&](std::size_t idx) -> const CellSpec& { return cells[idx]; });
    const auto& groups = items.cells;
    const auto& peak = items.peak;
    const auto count = static_cast<std::int64_t>(groups.size());
    MemoryGate gate;
    std::exception_ptr failure;  // the first exception from a cell or from `done`, rethrown below
    std::atomic<bool> failed{false};
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t g = 0; g < count; ++g) {
        if (stop.load() || failed.load()) continue;
        const MemoryGate::Hold hold(gate, peak[static_cast<std::size_t>(g)]);
        for (const std::size_t idx : groups[static_cast<std::size_t>(g)]) {
            if (stop.load() || failed.load()) break;
            std::string text;
            const auto started = std::chrono::steady_clock::now();
            try {
                text = cell_text(cells[idx]);
            } catch (...) {
#pragma omp critical(memcap_failure)
                if (!failure) failure = std::current_exception();
                failed = true;
                break;
            }
#pragma omp critical(memcap_rows)
            {
                if (!failed.load()) try {
                        done(idx, text, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
                    } catch (...) {
#pragma omp critical(memcap_failure)
                        if (!failure) failure = std::current_exception();
                        failed = true;
                    }
            }
        }
    }
    if (failure) std::rethrow_exception(failure);
}

}  // namespace memcap
