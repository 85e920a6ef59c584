// memcap/harness/exec/grid.hpp — grids of cells: what `run` and each sweep block compute.
//
// A grid block is lists of readouts, widths d, tasks, memories, budgets and
// task sizes n, and a seed count S. Its cells nest as
//
//     readout × d × task × memory × budget × n × seed      (outermost first)
//
// One builder, build_grid, makes a block from the words a front door was
// given — `memcap run`'s options, Python's `memcap.run` arguments, a sweep
// block's keys — with the same ranges (`A..B`, `A..B+S`, `A..B*F`), the same
// defaults, the same refusal of a value given twice and the same messages
// (each naming the key as that front door spells it). A sweep config is a
// list of blocks (sweep_config.hpp), its cells the blocks' cells in file
// order. Each cell's readout is resolved for its memory here, once.
//
// The width may be chosen per (memory, task, readout, budget, n) instead of
// given: `d = best` (default candidates: powers of two from 2 up to the budget
// that the memory can be built with there) or `d = best:8..512*2`; so may a
// memory parameter that declares candidates (`softmax:beta=best`); with `d = best`
// every real setting with candidates the spec leaves out is raced so
// (raced_at_best_width: `delta` as `delta:beta=best`). The choice
// is made in a race on `tuning_seeds` seeds disjoint from the scored ones (tuning.hpp).
#pragma once

#include "core/spec.hpp"
#include "harness/eval/cell.hpp"

#include <nlohmann/json.hpp>

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
    bool budgets_in_bits = false;  // given in bits (GridRequest::budget_bits); `budgets` holds the floats they buy
    std::vector<std::int64_t> ns;
    std::int64_t seeds = 10;
    std::vector<int> ds{64};
    bool d_best = false;            // d chosen on tuning seeds (ds is then {0})
    std::vector<int> d_candidates;  // with d_best: the widths tried; empty = the default widths
    std::int64_t tuning_seeds = 3;  // seeds each choice is made on
    std::vector<Spec> readouts;  // as given (auto allowed)
    std::uint64_t first_seed = 0;  // seeds first_seed .. first_seed + seeds - 1 (kTuningSeedBase: the tuning seeds)
    /// Capacity as a crossing (a sweep block's `crossing`, crossing.hpp): the accuracy thresholds
    /// whose crossings along n get probes and more scored seeds after the grid; empty: none.
    std::vector<double> crossing;
    int crossing_probes = 3;            // log-spaced probe n per bracket
    std::int64_t crossing_seeds = 0;    // the most scored seeds a point near a crossing gets (0: 4 x seeds)
    /// The thresholds (a subset of `crossing`) whose n* is refined until its bootstrap interval's
    /// half-width is at most crossing_resolve_width x n* (crossing.hpp); empty: none.
    std::vector<double> crossing_resolve;
    double crossing_resolve_width = 0.05;
    std::int64_t crossing_resolve_seeds = 0;  // the most scored seeds that rule gives a point (0: 4 x crossing_seeds)
    int crossing_resolve_probes = 0;          // that rule's probes inside each reading's own bracket (0: none)

    /// Sets the widths from `d` text: a list ("32 64", "8..512*2"), `best` or `best:LIST`.
    void set_widths(const std::string& text, const std::string& what);
    /// The widths as the manifest records them: a list, or "best" / "best:8,16,...".
    std::string widths_text() const;

    /// The block as a manifest records it (its specs canonical, its ranges expanded): the one
    /// serialisation of a grid, in one of two forms. A sweep block's (`sweep`: its name, and
    /// lists for d and readout, as SweepConfig::canonical and --resume compare them) or
    /// `memcap run`'s (one readout, and d a number when one width is given); `tuning_seeds`
    /// when a choice is made, `budgets_in_bits` when the budgets were given in bits
    /// (32 x budgets_floats), `first_seed` (run) when the seeds do not start at 0.
    nlohmann::ordered_json manifest(bool sweep) const;

    /// Cells in the block, counted without expanding; UsageError naming `what` beyond kMaxCells.
    std::int64_t size(const std::string& what) const;
    /// Every cell of the block, in nesting order, readouts resolved (choices still to make).
    std::vector<CellSpec> cells() const;

private:
    CellSpec tuned_cell(CellSpec cell) const;
};

/// How a front door spells the keys of a grid in its messages ("--n" on the command line,
/// "n" in Python and in a sweep block), and how it takes several specs.
struct GridKeys {
    std::string memories, tasks, n, budgets, seeds, d, tuning_seeds, readout, on_tuning_seeds;
    std::string budget_bits;  // the budgets in bits: --budget-bits, budget_bits
    std::string list;  // where the known specs are listed: "`memcap list`", "memcap.list()"
    /// The hint for a spec text that fails and holds a comma, e.g. "repeat -m (e.g. -m a -m b)".
    std::string (*several)(const std::string& key, const std::string& first, const std::string& rest);
};
extern const GridKeys kRunKeys;     // memcap run: --memory, --task, --n, --budget, ...
extern const GridKeys kPythonKeys;  // memcap.run: memories, tasks, n, budgets, ...
extern const GridKeys kSweepKeys;   // a sweep block: memories, tasks, n, budgets, ...

/// What a front door was asked for, as the words it was given. Empty lists and texts
/// take the defaults: budgets natural, readout auto, seeds 10, d 64, tuning seeds 3.
struct GridRequest {
    std::vector<std::string> memories, tasks, ns, budgets, readouts;
    /// Budgets in bits instead of floats (multiples of 32: a float is 32 bits). A memory
    /// given without `precision` then races it (precision=best), so each chooses the
    /// precision its bits are best spent at (memories/precision.hpp).
    std::vector<std::string> budget_bits;
    std::string seeds, d, tuning_seeds;
    /// Score on the tuning seeds kTuningSeedBase + 0 .. S-1 instead of 0 .. S-1 (for choosing
    /// a default by hand on seeds no scored cell has); refused with a choice to make.
    bool on_tuning_seeds = false;
};

/// The one grid builder: the block `request` describes, every value checked. UsageError
/// (naming the key as `keys` spells it) for a value that cannot be parsed, a required list
/// left empty, or a value given twice (its cells would run twice, and `aggregate` would
/// count the copies as more seeds). Specs are not checked against each other here
/// (check_cells does that for the cells).
GridBlock build_grid(const GridRequest& request, const GridKeys& keys, const std::string& name = "");

/// The whitespace-separated words of `text` (a list value of a config key or option).
std::vector<std::string> split_words(const std::string& text);

/// Task sizes from words: values and ranges, each in [1, 10^8].
std::vector<std::int64_t> parse_sizes(const std::vector<std::string>& words, const std::string& key);
/// Budgets from words: floats (values and ranges), or `natural` (the backend's natural size).
std::vector<std::optional<std::int64_t>> parse_budgets(const std::vector<std::string>& words, const std::string& key);
/// Budgets in bits from words (values and ranges), each a positive multiple of 32, as floats
/// (budget_of_bits): UsageError naming `key` and the value otherwise.
std::vector<std::optional<std::int64_t>> parse_budget_bits(const std::vector<std::string>& words, const std::string& key);
/// One count in [1, max] (seeds, tuning seeds): not a list.
std::int64_t parse_count(const std::string& text, const std::string& key, std::int64_t max);
/// An integer in [1, max] given for `key`; UsageError naming both otherwise.
std::int64_t parse_positive(const std::string& text, const std::string& key, std::int64_t max);

/// The product of `sizes` (a grid's dimensions); UsageError naming `what` when
/// it exceeds kMaxCells (checked without overflow).
std::int64_t checked_grid_size(const std::vector<std::int64_t>& sizes, const std::string& what);

/// Parses an integer list such as "4 8 16" or "4..4096*2" for key `what`;
/// each value must lie in [1, max].
std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& what, std::int64_t max);

class Races;

/// Throws UsageError (check_cell's) for the first cell that cannot run; each group (a cell
/// without its seed) is resolved and checked once, before any work is done. Returns each
/// cell's resolution (shared by its seeds; null for a cell whose choices are still to make),
/// to hand along to the run. A cell whose choices are still to make has its group's race
/// built instead (tuning.hpp: its candidates resolved, UsageError when none can run), into
/// `races` when given, to hand along to resolve_tuning.
ResolvedCells check_cells(const std::vector<CellSpec>& cells, Races* races = nullptr);

}  // namespace memcap
