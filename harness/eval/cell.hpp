// memcap/harness/eval/cell.hpp — one cell of a run or sweep, and its CSV rows.
//
// A cell is one (memory spec, task spec, readout, budget, d, n, seed). It is
// computed by one thread from its own random streams, so its rows do not
// depend on which thread, process or rank computes it, or when.
//
// CSV: one fixed header (kCsvHeader), one row per cell and slot, snake_case
// columns with units in the name, `budget_floats` and `slot` empty where they
// do not apply, specs in canonical form. A failed cell is one row with
// status=error and the reason in `message`; its measurement columns are empty.
#pragma once

#include "core/spec.hpp"
#include "harness/eval/readout.hpp"

#include <optional>
#include <string>
#include <vector>

namespace memcap {

struct CellSpec {
    Spec memory;
    Spec task;
    Spec readout;  // as given (auto, native, probe:...); the CSV shows the resolved one
    std::optional<std::int64_t> budget_floats;  // empty: the backend's natural size
    int d = 64;
    std::int64_t n = 0;
    std::uint64_t seed = 0;
};

extern const char* const kCsvHeader;

/// Computes one cell. Never throws for a measured failure: it becomes an error outcome.
CellOutcome run_cell(const CellSpec& cell);

/// Throws UsageError when the task cannot be run on this memory with this (resolved)
/// readout: a task that hides pairs (assoc_recall:control=structural_mask) needs a
/// memory whose table entry declares can_hide_pairs, and the native readout.
void check_combination(const Task& task, const Spec& task_spec, const Spec& memory_spec, const Spec& readout);

/// The CSV lines (each ending in '\n') for one computed cell.
std::string csv_rows(const CellSpec& cell, const CellOutcome& outcome);

/// Quotes a CSV field when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);

/// Splits one CSV line (no trailing newline) into fields, undoing csv_field's quoting.
std::vector<std::string> split_csv_line(const std::string& line);

}  // namespace memcap
