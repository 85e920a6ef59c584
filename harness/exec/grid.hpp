// memcap/harness/exec/grid.hpp — grids of cells: what `run` and each sweep block compute.
//
// A grid block is lists of readouts, widths d, tasks, memories, budgets and
// task sizes n, and a seed count S. Its cells nest as
//
//     readout × d × task × memory × budget × n × seed      (outermost first)
//
// `memcap run` builds one block from its options; a sweep config is a list of
// blocks (sweep_config.hpp), its cells the blocks' cells in file order. Each
// cell's readout is resolved for its memory here, once.
#pragma once

#include "core/spec.hpp"
#include "harness/eval/cell.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memcap {

/// The most cells one run or sweep may describe: a grid beyond it is a typo
/// (a range or seed count too large), refused before anything is allocated.
constexpr std::int64_t kMaxCells = 1000000;

struct GridBlock {
    std::string name;  // the sweep block's name ("" for `memcap run`)
    std::vector<Spec> memories, tasks;
    std::vector<std::optional<std::int64_t>> budgets{std::nullopt};  // empty optional: natural size
    std::vector<std::int64_t> ns;
    std::int64_t seeds = 10;
    std::vector<int> ds{64};
    std::vector<Spec> readouts;  // as given (auto allowed)

    /// Cells in the block, counted without expanding; UsageError naming `what` beyond kMaxCells.
    std::int64_t size(const std::string& what) const;
    /// Every cell of the block, in nesting order, readouts resolved.
    std::vector<CellSpec> cells() const;
};

/// The product of `sizes` (a grid's dimensions); UsageError naming `what` when
/// it exceeds kMaxCells (checked without overflow).
std::int64_t checked_grid_size(const std::vector<std::int64_t>& sizes, const std::string& what);

/// Throws UsageError (check_cell's) for the first cell that cannot run; each distinct
/// (memory, task, readout, budget, d, n) is checked once, before any work is done.
void check_cells(const std::vector<CellSpec>& cells);

}  // namespace memcap
