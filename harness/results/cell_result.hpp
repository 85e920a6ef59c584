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
    double target_cos_sum = 0.0;   // Σ cos(read, target) over the slot's queries (0 for a zero read); NaN: not measured
};

/// One query of a task with absent queries (tasks/task.hpp, Episode::target = −1): its
/// decision statistic (the read's best candidate score, max_j read·c_j) and what it was.
struct Decision {
    enum Kind : signed char { Absent = 0, PresentWrong = 1, PresentRight = 2 };
    float statistic = 0.0f;
    Kind kind = Absent;
};

/// The "nothing fits" side of a cell whose task asks for keys never written: the threshold
/// on the decision statistic (chosen on tuning seeds, harness/eval/cell.hpp) and what it
/// gives on the scored queries. A query is accepted when its statistic is >= threshold.
struct Abstention {
    double threshold = 0.0;
    std::int64_t present = 0, absent = 0;  // scored queries of each kind
    double false_accept = 0.0;   // absent queries accepted / absent
    double present_accept = 0.0; // present queries accepted / present
    double balanced = 0.0;       // (present accepted and right / present + absent rejected / absent) / 2
    double auc = 0.0;            // P(statistic of a present query > an absent one's), ties count 1/2
};

/// What a readout measured on one cell.
struct CellOutcome {
    std::vector<SlotScore> slots;  // in slot order
    std::int64_t state_floats = 0;
    std::int64_t state_bits = 0;  // state_floats priced at the memory's precision (memories/precision.hpp)
    std::int64_t param_floats = 0;
    std::vector<Decision> decisions;  // one per query, for tasks with absent queries; empty otherwise
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
    std::string tuned;         // settings chosen on tuning seeds, e.g. "d=64,beta=8"; empty: none
    std::optional<Abstention> abstention;  // tasks with absent queries only
};

}  // namespace memcap
