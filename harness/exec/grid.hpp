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
//
// The width may be chosen per (memory, task, readout, budget, n) instead of
// given: `d = best` (default candidates: powers of two from 4 up to the budget
// that the memory can be built with there) or `d = best:8..512*2`; so may a
// memory parameter that declares candidates (`softmax:beta=best`). The choice
// is made in a race on `tuning_seeds` seeds disjoint from the scored ones (tuning.hpp).
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
    bool d_best = false;            // d chosen on tuning seeds (ds is then {0})
    std::vector<int> d_candidates;  // with d_best: the widths tried; empty = the default widths
    std::int64_t tuning_seeds = 3;  // seeds each choice is made on
    std::vector<Spec> readouts;  // as given (auto allowed)

    /// Sets the widths from `d` text: a list ("32 64", "8..512*2"), `best` or `best:LIST`.
    void set_widths(const std::string& text, const std::string& what);
    /// The widths as the manifest records them: a list, or "best" / "best:8,16,...".
    std::string widths_text() const;

    /// Cells in the block, counted without expanding; UsageError naming `what` beyond kMaxCells.
    std::int64_t size(const std::string& what) const;
    /// Every cell of the block, in nesting order, readouts resolved (choices still to make).
    std::vector<CellSpec> cells() const;

private:
    CellSpec tuned_cell(CellSpec cell) const;
};

/// The product of `sizes` (a grid's dimensions); UsageError naming `what` when
/// it exceeds kMaxCells (checked without overflow).
std::int64_t checked_grid_size(const std::vector<std::int64_t>& sizes, const std::string& what);

/// Parses an integer list such as "4 8 16" or "4..4096*2" for key `what`;
/// each value must lie in [1, max].
std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& what, std::int64_t max);

/// Throws UsageError (check_cell's) for the first cell that cannot run; each distinct
/// (memory, task, readout, budget, d, n) is checked once, before any work is done.
void check_cells(const std::vector<CellSpec>& cells);

}  // namespace memcap
