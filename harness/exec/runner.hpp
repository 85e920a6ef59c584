// memcap/harness/exec/runner.hpp — computing many cells on every core.
//
// Cells are computed in parallel (OpenMP, dynamic schedule; Eigen stays
// single-threaded inside a cell) and their rows are emitted in cell order, so
// the output is byte-identical at any thread count.
#pragma once

#include "harness/eval/cell.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace memcap {

/// The most cells one run or sweep may describe: a grid beyond it is a typo
/// (a range or seed count too large), refused before anything is allocated.
constexpr std::int64_t kMaxCells = 1000000;

/// The product of `sizes` (a grid's dimensions); UsageError naming `what` when
/// it exceeds kMaxCells (checked without overflow).
std::int64_t checked_grid_size(const std::vector<std::int64_t>& sizes, const std::string& what);

/// The grid `memcap run` builds: tasks × memories × budgets × n × seeds, in that nesting order.
std::vector<CellSpec> expand_grid(const std::vector<Spec>& memories, const std::vector<Spec>& tasks,
                                  const std::vector<std::optional<std::int64_t>>& budgets,
                                  const std::vector<std::int64_t>& ns, std::int64_t seeds, int d,
                                  const Spec& readout);

/// Throws UsageError if any (memory, budget, task) in `cells` cannot be built,
/// e.g. a budget below the backend's minimum, before any work is done.
void check_buildable(const std::vector<CellSpec>& cells);

/// Computes every cell with `threads` threads and calls `emit(i, rows)` for
/// i = 0, 1, 2, ... in order (on the calling thread, as soon as cell i and all
/// before it are done). Shows progress on stderr when `progress` is true.
void run_cells(const std::vector<CellSpec>& cells, int threads, bool progress,
               const std::function<void(std::size_t, const std::string&)>& emit);

/// Computes cells[order[0]], cells[order[1]], ... with `threads` threads
/// (dynamic schedule) and calls `done(i, rows)` as each cell i finishes, in
/// completion order, one call at a time. Once `*stop` becomes true no further
/// cell is started; cells in flight still finish and are reported.
void run_cells_unordered(const std::vector<CellSpec>& cells, const std::vector<std::size_t>& order, int threads,
                         const std::atomic<bool>& stop,
                         const std::function<void(std::size_t, const std::string&)>& done);

}  // namespace memcap
