// memcap/harness/exec/runner.cpp — see runner.hpp.
#include "harness/exec/runner.hpp"

#include "harness/train/trainer.hpp"

#include "core/spin_lock.hpp"
#include "harness/exec/memory_gate.hpp"
#include "harness/exec/placement.hpp"
#include "harness/exec/progress.hpp"
#include "harness/results/csv.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <unordered_map>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace memcap {

std::string cell_text(const CellSpec& cell) { return cell_text(*resolve_cell(cell, false), cell); }

std::string cell_text(const ResolvedCell& resolved, const CellSpec& cell) {
    try {
        return cell_rows(run_cell(resolved, cell));
    } catch (const std::bad_alloc&) {
        throw OutOfMemory(cell, resolved.peak_bytes);  // while writing its rows
    } catch (const UsageError&) {
        throw;  // out of memory: one line for the user, as it is
    } catch (const std::exception& e) {
        throw std::runtime_error("cell (" + cell_label(cell) + "): " + e.what());
    }
}

std::string progress_class(const CellSpec& cell) { return cell.memory.name() + " " + cell.readout.name(); }

WorkItems group_by_shared_episode(const std::vector<std::size_t>& indices,
                                  const std::function<const ResolvedCell&(std::size_t)>& resolved_of,
                                  const std::function<std::uint64_t(std::size_t)>& seed_of) {
    WorkItems items;
    // The items are those of shared_episode_key's text (task spec, n, d, seed), without making
    // that text for every cell: the task spec is canonicalised once per resolution (the cells
    // of one resolution differ in the seed only) and named by a number.
    struct Key {
        std::size_t task;
        std::int64_t n;
        int d;
        std::uint64_t seed;
        bool operator==(const Key& o) const { return task == o.task && n == o.n && d == o.d && seed == o.seed; }
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const {
            std::uint64_t h = k.task * 0x9E3779B97F4A7C15ULL;
            for (const std::uint64_t v : {static_cast<std::uint64_t>(k.n), static_cast<std::uint64_t>(k.d), k.seed})
                h = (h ^ v) * 0x100000001B3ULL + (h >> 29);
            return static_cast<std::size_t>(h);
        }
    };
    std::unordered_map<Key, std::size_t, KeyHash> item_of;
    item_of.reserve(indices.size());
    std::unordered_map<const ResolvedCell*, std::size_t> task_of;  // resolution -> its task spec's number
    std::unordered_map<std::string, std::size_t> task_number;
    for (const std::size_t idx : indices) {
        const ResolvedCell& r = resolved_of(idx);
        const std::uint64_t seed = seed_of(idx);
        if (!shares_episode(r, seed)) {
            items.cells.push_back({idx});
            continue;
        }
        auto known = task_of.find(&r);
        if (known == task_of.end())
            known = task_of.emplace(&r, task_number.try_emplace(r.cell.task.canonical(), task_number.size()).first->second).first;
        const auto [it, fresh] = item_of.try_emplace(Key{known->second, r.cell.n, r.cell.d, seed}, items.cells.size());
        if (fresh) items.cells.emplace_back();
        items.cells[it->second].push_back(idx);
    }
    // A cell's estimate holds for every seed of its group: its resolution's
    items.peak.assign(items.cells.size(), 0.0);
    for (std::size_t i = 0; i < items.cells.size(); ++i)
        for (const std::size_t idx : items.cells[i]) items.peak[i] = std::max(items.peak[i], resolved_of(idx).peak_bytes);
    return items;
}

CellProgress::CellProgress(const std::vector<std::size_t>& indices,
                           const std::function<const CellSpec&(std::size_t)>& cell_of,
                           const std::function<const ResolvedCell&(std::size_t)>& resolved_of, std::string label,
                           bool enabled, int threads, bool calibrated)
    : cell_of_(cell_of), calibrated_(calibrated) {
    double total = 0;
    if (enabled) {
        std::size_t size = 0;
        for (const std::size_t i : indices) size = std::max(size, i + 1);
        work_.assign(size, 0.0);
        for (const std::size_t i : indices) total += work_[i] = cell_work(resolved_of(i), cell_of(i).seed);
    }
    bar_ = std::make_unique<Progress>(static_cast<std::int64_t>(indices.size()), std::move(label), enabled, total);
    if (enabled && calibrated)  // the ETA calibrated per memory on its own cells' seconds
        for (const std::size_t i : indices) bar_->expect(progress_class(cell_of(i)), work_[i]);
    bar_->set_threads(threads);
}

void CellProgress::tick(std::size_t i, double seconds) {
    if (work_.empty()) bar_->tick(1, 1.0);
    else if (calibrated_ && seconds >= 0) bar_->tick(progress_class(cell_of_(i)), work_[i], seconds);
    else bar_->tick(1, work_[i]);
}

void run_cells(const std::vector<CellSpec>& cells, const ResolvedCells& resolved, int threads, bool progress,
               const std::function<void(std::size_t, const std::string&)>& emit, const std::atomic<bool>* stop) {
    std::vector<std::string> rows(cells.size());
    std::vector<char> done(cells.size(), 0);
    std::vector<std::size_t> order(cells.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    CellProgress bar(
        order, [&](std::size_t i) -> const CellSpec& { return cells[i]; },
        [&](std::size_t i) -> const ResolvedCell& { return *resolved[i]; }, "memcap", progress, threads);
    std::size_t next_emit = 0;
    auto flush_ready = [&] {
        while (next_emit < cells.size() && done[next_emit]) {
            emit(next_emit, rows[next_emit]);
            rows[next_emit].clear();
            rows[next_emit].shrink_to_fit();
            ++next_emit;
        }
    };
    const std::atomic<bool> never{false};
    // emitting happens on the calling thread only: completed cells are parked until it is their turn
    run_cells_unordered(cells, resolved, order, threads, stop ? *stop : never, [&](std::size_t idx, const std::string& text, double seconds) {
        rows[idx] = text;
        done[idx] = 1;
        if (omp_get_thread_num() == 0) flush_ready();
        bar.tick(idx, seconds);
    }, progress);
    flush_ready();
    bar.finish();
}

void run_cells_unordered(const std::vector<CellSpec>& cells, const std::vector<std::size_t>& order, int threads,
                         const std::atomic<bool>& stop,
                         const std::function<void(std::size_t, const std::string&, double)>& done) {
    // Only the cells in `order` are resolved (an MPI rank runs a batch of a sweep's cells).
    ResolvedCells resolved(cells.size());
    std::size_t last = cells.size();
    for (const std::size_t idx : order) {
        resolved[idx] = last < cells.size() && resolved[last] && same_but_seed(cells[idx], cells[last]) ? resolved[last]
                                                                                                     : resolve_cell(cells[idx], false);
        last = idx;
    }
    run_cells_unordered(cells, resolved, order, threads, stop, done);
}

void run_cells_unordered(const std::vector<CellSpec>& cells, const ResolvedCells& resolved,
                         const std::vector<std::size_t>& order, int threads, const std::atomic<bool>& stop,
                         const std::function<void(std::size_t, const std::string&, double)>& done, bool progress) {
    for (const std::size_t idx : order)
        if (!resolved[idx]) throw std::logic_error("cell (" + cell_label(cells[idx]) + ") was not resolved before its run");
    {  // the trained frame's models first, every thread busy (a model serves the cells of every n)
        std::vector<train::ModelRequest> requests;
        for (const std::size_t idx : order) {
            const CellSpec& c = cells[idx];
            if (!train::trained(c.memory)) continue;
            const ResolvedCell& rc = *resolved[idx];
            requests.push_back({rc.memory, rc.size, c.memory, c.task, rc.shape, rc.at(c.seed).d, c.seed});
        }
        std::optional<Progress> bar;
        train::prepare(
            requests, threads, stop,
            [&](std::size_t runs) {
                bar.emplace(static_cast<std::int64_t>(runs), "training", progress);
                bar->set_threads(threads);
                bar->set_unit("training runs");
            },
            [&] { bar->tick(); });
        if (bar) bar->finish();
    }
    // Cells that read the same single test episode natively are one work item (so the
    // native readout draws their episode once, readout.cpp); every other cell, long ones
    // included (many episodes, the probe), is balanced across threads on its own.
    const WorkItems items = group_by_shared_episode(
        order, [&](std::size_t idx) -> const ResolvedCell& { return *resolved[idx]; },
        [&](std::size_t idx) { return cells[idx].seed; });
    const auto& groups = items.cells;
    const auto& peak = items.peak;
    const auto count = static_cast<std::int64_t>(groups.size());
    MemoryGate gate;
    // The gate can hold a thread back only when `threads` of the largest items exceed its budget;
    // otherwise it is not consulted (each hold takes its lock twice, a line shared by every thread).
    const double largest = peak.empty() ? 0.0 : *std::max_element(peak.begin(), peak.end());
    const bool gated = static_cast<double>(std::max(threads, 1)) * largest > gate.limit();
    SpinLock rows_lock;
    std::exception_ptr failure;  // the first exception from a cell or from `done`, rethrown below
    std::atomic<bool> failed{false};
    TeamPlacement placement;  // placement.hpp says why
#pragma omp parallel num_threads(threads)
    {
        placement.enter(omp_get_thread_num(), omp_get_num_threads());
        struct Finished {
            std::size_t idx;
            std::string text;
            double seconds;
        };
        std::vector<Finished> finished;  // a work item's cells, reused from item to item
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t g = 0; g < count; ++g) {
            if (stop.load() || failed.load()) continue;
            std::optional<MemoryGate::Hold> hold;
            if (gated) hold.emplace(gate, peak[static_cast<std::size_t>(g)]);
            // The group's cells run one after the other; their rows go to `done` together, under
            // one hold of the lock (a cell's rows wait at most for its group's other cells): the
            // lock's line then moves between the cores once a group, not once a cell.
            finished.clear();
            std::exception_ptr thrown;  // a cell's; the cells before it are delivered first
            for (const std::size_t idx : groups[static_cast<std::size_t>(g)]) {
                if (stop.load() || failed.load()) break;
                const auto started = std::chrono::steady_clock::now();
                try {
                    finished.push_back({idx, cell_text(*resolved[idx], cells[idx]),
                                        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()});
                } catch (...) {
                    thrown = std::current_exception();
                    break;
                }
            }
            if (!finished.empty()) {
                const std::lock_guard<SpinLock> lock(rows_lock);  // one `done` at a time; never sleeps
                for (const Finished& f : finished) {
                    if (failed.load()) break;
                    try {
                        done(f.idx, f.text, f.seconds);
                    } catch (...) {
#pragma omp critical(memcap_failure)
                        if (!failure) failure = std::current_exception();
                        failed = true;
                    }
                }
            }
            if (thrown) {
#pragma omp critical(memcap_failure)
                if (!failure) failure = thrown;
                failed = true;
            }
        }
    }  // omp parallel
    if (failure) std::rethrow_exception(failure);
}

}  // namespace memcap
