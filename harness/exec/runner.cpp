// memcap/harness/exec/runner.cpp — see runner.hpp.
#include "harness/exec/runner.hpp"

#include "harness/exec/memory_gate.hpp"
#include "harness/exec/progress.hpp"
#include "harness/results/csv.hpp"

#include <omp.h>

#include <algorithm>
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

void run_cells(const std::vector<CellSpec>& cells, int threads, bool progress,
               const std::function<void(std::size_t, const std::string&)>& emit, const std::atomic<bool>* stop) {
    std::vector<std::string> rows(cells.size());
    std::vector<char> done(cells.size(), 0);
    std::vector<double> work(progress ? cells.size() : 0);
    for (std::size_t i = 0; i < work.size(); ++i) work[i] = cell_work(cells[i]);
    double total = 0;
    for (double w : work) total += w;
    Progress bar(static_cast<std::int64_t>(cells.size()), "memcap", progress, total);
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
    run_cells_unordered(cells, order, threads, stop ? *stop : never, [&](std::size_t idx, const std::string& text) {
        rows[idx] = text;
        done[idx] = 1;
        if (omp_get_thread_num() == 0) flush_ready();
        bar.tick(1, work.empty() ? 1.0 : work[idx]);
    });
    flush_ready();
    bar.finish();
}

void run_cells_unordered(const std::vector<CellSpec>& cells, const std::vector<std::size_t>& order, int threads,
                         const std::atomic<bool>& stop,
                         const std::function<void(std::size_t, const std::string&)>& done) {
    // Cells that read the same single test episode natively (shared_episode_key: the
    // same task spec, n, d and seed, another memory or budget) form one work item, run
    // one after the other on one thread in `order`, so the native readout draws their
    // episode once (readout.cpp). Every other cell is a work item of its own, so long
    // cells (many episodes, the probe) are balanced across threads as before. Work
    // items are taken in the order of their first cell.
    std::vector<std::vector<std::size_t>> groups;
    {
        std::map<std::string, std::size_t> group_of;
        for (const std::size_t idx : order) {
            const std::string key = shared_episode_key(cells[idx]);
            if (key.empty()) {
                groups.push_back({idx});
                continue;
            }
            const auto [it, fresh] = group_of.try_emplace(key, groups.size());
            if (fresh) groups.emplace_back();
            groups[it->second].push_back(idx);
        }
    }
    const auto count = static_cast<std::int64_t>(groups.size());
    // Each work item holds its largest cell's estimated peak while it runs (memory_gate.hpp).
    std::vector<double> peak(groups.size(), 0.0);
    for (std::size_t g = 0; g < groups.size(); ++g)
        for (const std::size_t idx : groups[g]) peak[g] = std::max(peak[g], estimated_peak(cells[idx]));
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
                        done(idx, text);
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
