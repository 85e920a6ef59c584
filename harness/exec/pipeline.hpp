// memcap/harness/exec/pipeline.hpp — the one way from a grid's cells to their CSV rows.
//
// Behind every front door — `memcap run`, `memcap sweep`, Python's `memcap.run` — the
// same stages, in this order:
//
//   cells  the grid's cells (grid.hpp; a sweep's blocks, sweep_config.hpp)
//   check  every cell checked before any work: each group (a cell without its seed)
//          resolved once, and for each group with a choice to make (d = best,
//          key = best) its race built from its candidates, each resolved once
//          (check_cells, tuning.hpp)
//   tune   the races run on tuning seeds; each tuned cell rewritten with its group's
//          choice and handed its winner's resolution (resolve_tuning)
//   run    the cells on every core through their resolutions (runner.hpp), the
//          progress weighed by the cost model (CellProgress)
//
// A front door adds only what is its own: where the rows go (stdout, a file and its
// manifest; a sweep's journal, its MPI ranks and --resume; a Python string), signals
// and messages.
#pragma once

#include "harness/exec/runner.hpp"
#include "harness/exec/tuning.hpp"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace memcap {

class Pipeline {
public:
    Pipeline() = default;
    /// Checks `cells` (UsageError, check_cells', for the first that cannot run).
    explicit Pipeline(std::vector<CellSpec> cells);

    const std::vector<CellSpec>& cells() const { return cells_; }
    const ResolvedCells& resolved() const { return resolved_; }
    const Races& races() const { return races_; }

    /// Makes every choice the cells ask for (resolve_tuning) on `threads` threads, shared over
    /// the processes of `share` and kept in `journal` (a sweep's).
    void tune(int threads, bool progress, const TuningShare& share = {}, const TuningJournal& journal = {},
              std::uint64_t tuning_seed_offset = 0);

    /// The progress bar of running the cells in `order` (CellProgress).
    CellProgress progress(const std::vector<std::size_t>& order, std::string label, bool enabled, int threads,
                          bool calibrated = true) const;
    /// Computes the cells in `order` on `threads` threads and calls `done(i, rows, seconds)` as
    /// each finishes, one call at a time (run_cells_unordered); none starts once `stop` is set.
    void run(const std::vector<std::size_t>& order, int threads, const std::atomic<bool>& stop,
             const std::function<void(std::size_t, const std::string&, double seconds)>& done,
             bool progress = false) const;
    /// Computes every cell and calls `emit(i, rows)` in cell order (run_cells), with a progress bar.
    void run_in_order(int threads, bool progress, const std::function<void(std::size_t, const std::string&)>& emit,
                      const std::atomic<bool>* stop = nullptr) const;

private:
    std::vector<CellSpec> cells_;
    ResolvedCells resolved_;
    Races races_;
};

/// 0, 1, ..., count - 1: every cell of a run, in cell order.
std::vector<std::size_t> every_cell(std::size_t count);

}  // namespace memcap
