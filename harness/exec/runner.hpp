// memcap/harness/exec/runner.hpp — computing many cells on every core.
//
// Cells are computed in parallel (OpenMP, dynamic schedule; Eigen stays
// single-threaded inside a cell) and each becomes its CSV rows
// (results/csv.hpp). run_cells emits them in cell order, so the output is
// byte-identical at any thread count. The cells in flight hold at most
// kInFlightShare of the machine's memory by their estimated peaks
// (memory_gate.hpp): a thread waits rather than overcommit. An exception from a cell (a bug, or
// memory exhausted) stops the run: no further cell starts, and it is rethrown
// naming the cell.
#pragma once

#include "harness/eval/cell.hpp"
#include "harness/exec/progress.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace memcap {

/// Computes every cell with `threads` threads, each through its resolution (check_cells', or
/// resolve_tuning's for a tuned cell: no table is looked up again), and calls `emit(i, rows)`
/// for i = 0, 1, 2, ... in order (on the calling thread, as soon as cell i and all before it
/// are done). Shows progress on stderr when `progress` is true (CellProgress). Once `*stop`
/// (when given) becomes true no further cell starts; the cells in flight finish, and `emit`
/// is called for the done prefix only.
void run_cells(const std::vector<CellSpec>& cells, const ResolvedCells& resolved, int threads, bool progress,
               const std::function<void(std::size_t, const std::string&)>& emit,
               const std::atomic<bool>* stop = nullptr);

/// The progress bar of a run of cells (progress.hpp), the one way every run weighs its cells:
/// each cell `i` of `indices` weighs its work by the cost model (cell_work through
/// `resolved_of(i)`), and with `calibrated` (the cells' seconds are measured here, not on
/// other MPI ranks) it is declared in its class (progress_class of `cell_of(i)`), so the ETA
/// is calibrated per class on the cells' own seconds. Weighs nothing when not `enabled`: the
/// weights never affect a result.
class CellProgress {
public:
    CellProgress(const std::vector<std::size_t>& indices, const std::function<const CellSpec&(std::size_t)>& cell_of,
                 const std::function<const ResolvedCell&(std::size_t)>& resolved_of, std::string label, bool enabled,
                 int threads, bool calibrated = true);
    /// Cell `i` done; it took `seconds` on its thread (< 0: not known, e.g. on another rank).
    void tick(std::size_t i, double seconds);
    void finish() { bar_->finish(); }

private:
    std::function<const CellSpec&(std::size_t)> cell_of_;
    std::vector<double> work_;  // by index; empty when not enabled
    bool calibrated_;
    std::unique_ptr<Progress> bar_;
};

/// Computes cells[order[0]], cells[order[1]], ... with `threads` threads
/// (dynamic schedule) and calls `done(i, rows, seconds)` as each cell i finishes (the
/// seconds it took on its thread), in
/// completion order, one call at a time. Cells with the same shared_episode_key
/// (eval/cell.hpp) are one work item, run in `order` on one thread, so they draw
/// their episode once; every other cell is a work item of its own. Once `*stop`
/// becomes true no further cell is started; cells in flight still finish and are
/// reported.
void run_cells_unordered(const std::vector<CellSpec>& cells, const std::vector<std::size_t>& order, int threads,
                         const std::atomic<bool>& stop,
                         const std::function<void(std::size_t, const std::string&, double seconds)>& done);
/// run_cells_unordered with the resolutions of (at least) the cells in `order` handed along.
/// Cells in the trained frame (train=layer) have their models trained first, `threads` at once
/// (train::prepare; `progress`: its bar), then are scored as any cell.
void run_cells_unordered(const std::vector<CellSpec>& cells, const ResolvedCells& resolved,
                         const std::vector<std::size_t>& order, int threads, const std::atomic<bool>& stop,
                         const std::function<void(std::size_t, const std::string&, double seconds)>& done,
                         bool progress = false);

/// The class a cell's progress is calibrated in (progress.hpp): its memory and readout, whose
/// cost model is wrong by one factor.
std::string progress_class(const CellSpec& cell);

/// Work items of a run: `indices` grouped so that cells with the same non-empty
/// shared_episode_key (eval/cell.hpp) form one item, run one after another on one thread
/// so their episode is drawn once; every other cell is an item of its own. Items are in
/// the order of their first cell, and cells keep their order within an item. `peak[i]`
/// is the largest estimated peak (the resolutions') of item i's cells: what the item holds
/// of the budget of cells in flight (memory_gate.hpp) while it runs.
struct WorkItems {
    std::vector<std::vector<std::size_t>> cells;
    std::vector<double> peak;
};
WorkItems group_by_shared_episode(const std::vector<std::size_t>& indices,
                                  const std::function<const ResolvedCell&(std::size_t)>& resolved_of,
                                  const std::function<std::uint64_t(std::size_t)>& seed_of);

/// The CSV rows of one cell; an exception from it is rethrown as std::runtime_error naming the cell.
std::string cell_text(const CellSpec& cell);
/// cell_text of `cell` (its seed) through its resolution.
std::string cell_text(const ResolvedCell& resolved, const CellSpec& cell);

}  // namespace memcap
