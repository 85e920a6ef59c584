// memcap/harness/exec/sweep_config.hpp — sweep configs: which cells a sweep computes.
//
// A sweep config is an INI file (read by Boost.PropertyTree's INI parser).
// An optional [sweep] section gives defaults; every [block NAME] section is one
// grid, and the sweep's cells are the blocks' grids in file order:
//
//     ; capacity.ini
//     [sweep]
//     seeds = 10                   ; seeds 0..9
//     d = 64
//
//     [block recall]
//     memories = softmax linear    ; spec strings, separated by spaces
//     tasks    = assoc_recall
//     budgets  = 256 1024 natural
//     n        = 4..4096*2         ; 4 8 16 ... 4096
//
// Keys (in [sweep] as defaults, in a block to override them):
//   memories  spec strings (required)          tasks     spec strings (required)
//   n         task sizes (required)            budgets   floats or `natural` (default natural)
//   seeds     count S: seeds 0..S-1 (10)       d         dimension(s) (64)
//   readout   readout spec(s) (auto)
//   crossing  accuracy thresholds in (0, 1): probes and seeds near each crossing after the grid
//             (crossing.hpp), with crossing_probes (3) and crossing_seeds (4 x seeds)
//   plugins   shared libraries with more backends, loaded before the blocks are
//             read ([sweep] only; relative to the config's directory; plugins.hpp)
// Integer lists take single values and ranges: `A..B` (step 1), `A..B+S`
// (step S), `A..B*F` (×F while ≤ B).
//
// Within a block, cells nest as in grid.hpp: readout × d × task × memory ×
// budget × n × seed (outermost first). A cell listed twice — in one block or across blocks —
// is an error, as is an unknown section or key, an empty value, or a spec,
// size or budget `memcap run` would reject. Comments are whole lines starting
// with `;` or `#`; a `;` or `#` after a value is also taken as a comment.
#pragma once

#include "harness/exec/grid.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace memcap {

struct SweepConfig {
    std::string path;  // as given on the command line
    std::string name;  // the file's stem: results go to NAME.csv
    std::vector<GridBlock> blocks;
    std::vector<std::string> plugins;  // the [sweep] section's `plugins`, as written

    /// Every cell of every block, in sweep order.
    std::vector<CellSpec> cells() const;
    /// The config in canonical form (specs canonical, ranges expanded): what the
    /// manifest records and what --resume compares.
    nlohmann::ordered_json canonical() const;
};

/// Reads and checks a sweep config; UsageError (one line, naming the file and
/// the problem) on any fault, including duplicate cells.
SweepConfig load_sweep_config(const std::string& path);

}  // namespace memcap
