// memcap/harness/results/cell_result.hpp — what one cell produced, complete and typed.
//
// A cell (one memory spec, task spec, readout, budget, d, n, seed) runs into one
// CellResult: what was computed (canonical specs, the readout actually used),
// the task's chance level, and what was measured (per-slot counts, state and
// parameter floats) or why it failed. Formatters (results/columns.hpp,
// aggregate, reproduce) only read this record; they never rebuild a task or a
// memory to fill in a column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memcap {

/// Scores of the queries of one slot (lag, position; −1 for tasks without slots).
struct SlotScore {
    int slot = -1;
    std::int64_t queries = 0;
    std::int64_t correct = 0;
    double target_dist_sum = 0.0;  // Σ ‖read − target‖ over the slot's queries; NaN: not measured
};

/// What a readout measured on one cell.
struct CellOutcome {
    std::vector<SlotScore> slots;  // in slot order
    std::int64_t state_floats = 0;
    std::int64_t param_floats = 0;
    bool ok = true;
    std::string message;  // why the cell failed, when !ok
};

/// One cell, complete: its identity, its chance level and its outcome.
struct CellResult : CellOutcome {
    std::string memory_spec, task_spec;  // canonical spec strings
    std::string readout;                 // the readout used (auto resolved), canonical
    std::optional<std::int64_t> budget_floats;  // empty: the backend's natural size
    int d = 0;
    std::int64_t n = 0;
    std::uint64_t seed = 0;
    double chance_frac = 0.0;  // accuracy of a uniform guess among the candidates
    std::string tuned;         // settings chosen on tuning seeds, e.g. "d,beta"; empty: none
};

}  // namespace memcap
