// memcap/harness/eval/cell.hpp — one cell, checked and evaluated into one CellResult.
//
// A cell is one (memory spec, task spec, readout, budget, d, n, seed). It is
// computed by one thread from its own random streams, so its result does not
// depend on which thread, process or rank computes it, or when.
//
// Two steps, both here: check_cell refuses (UsageError, one line) a cell that
// cannot run — a budget below the backend's minimum, a task that cannot be
// posed at this n or d, a combination the memory or readout cannot do — so
// every grid is checked before any work; run_cell then computes it. A
// measured failure (a non-finite read, a probe that cannot be solved) is an
// error outcome in the result; anything else that goes wrong is a bug and
// propagates as an exception.
#pragma once

#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/results/cell_result.hpp"
#include "memories/memory.hpp"
#include "tasks/task.hpp"

#include <memory>
#include <optional>
#include <string>

namespace memcap {

struct CellSpec {
    Spec memory;
    Spec task;
    Spec readout;  // the readout used: never `auto` (see make_cell)
    std::optional<std::int64_t> budget_floats;  // empty: the backend's natural size
    int d = 64;
    std::int64_t n = 0;
    std::uint64_t seed = 0;

    // Choices made on tuning seeds (harness/exec/tuning.hpp). Before tuning, a cell that
    // asks for one has tuning_seeds > 0, and d = 0 with d_candidates (d = best) and/or
    // memory parameters given as `best`; tuning rewrites d and the memory spec with the
    // choice and records what was chosen in `tuned`.
    std::vector<int> d_candidates;  // empty with d = 0: the default widths for the memory and budget
    int tuning_seeds = 0;           // 0: nothing left to choose
    std::string tuned;              // what was chosen, e.g. "d,beta" (CSV column `tuned`); empty: nothing

    bool needs_tuning() const { return tuning_seeds > 0; }
};

/// A cell with `readout` resolved for its memory (`auto` becomes native or probe).
CellSpec make_cell(const Spec& memory, const Spec& task, const Spec& readout, std::optional<std::int64_t> budget_floats,
                   int d, std::int64_t n, std::uint64_t seed);

/// The cell in words, for messages: "softmax:beta=16 assoc_recall:... readout=native budget=natural d=64 n=8 seed=0".
std::string cell_label(const CellSpec& cell);
/// The cell's group: its label without the seed (cells that share a tuning choice).
std::string group_label(const CellSpec& cell);
/// True when the two cells differ in the seed only (equal group_label), without building
/// the labels: what the checks and estimates that hold for every seed of a group reuse.
bool same_but_seed(const CellSpec& a, const CellSpec& b);

/// Builds the cell's memory for its task (shape from the task, budget from the cell).
std::unique_ptr<Memory> build_memory(const CellSpec& cell, const Task& task);

/// What names the one test episode of a cell read through the native readout (task
/// spec, n, d, seed): cells with the same key, whatever their memory, budget or
/// readout parameters, read the same episode, and the native readout reuses the last
/// one a thread filled (readout.cpp). Empty for a cell with more test episodes or
/// another readout: nothing to share (run_cells_unordered keeps it a work item of its own).
std::string shared_episode_key(const CellSpec& c);

/// A rough measure of the cell's work, for progress estimates only: the FLOPs the memory's
/// cost model declares for an episode's write and read, plus the native read's cleanup,
/// times the scored episodes (without a cost model: n × state size × scored episodes), plus
/// n × state × training rows for the probe. Never affects results.
double cell_work(const CellSpec& cell);

/// Throws UsageError when the cell cannot run (see above); builds nothing: sizes and estimates only.
void check_cell(const CellSpec& cell);
/// check_cell without the machine's memory: what does not depend on where it runs. Returns
/// the cell's estimated peak bytes (its memory's and its task's); builds nothing.
double check_cell_structure(const CellSpec& cell);

/// The complete result of `cell` from a readout's outcome and the task's chance level.
CellResult cell_result(const CellSpec& cell, CellOutcome outcome, double chance_frac);

/// Computes one cell. A measured failure is an error outcome; a bug throws. A task with
/// absent queries also runs the cell on the threshold's tuning seeds (eval/abstention.hpp)
/// and fills CellResult::abstention. A cell that cannot get its memory (std::bad_alloc)
/// throws OutOfMemory: the user's problem to solve.
CellResult run_cell(const CellSpec& cell);

/// A cell that could not allocate its memory: a UsageError (exit status 2) whose one line
/// names the cell, its estimated peak and what to lower (--threads, the budget, n, d).
struct OutOfMemory : UsageError {
    explicit OutOfMemory(const CellSpec& cell);
    static std::string message(const CellSpec& cell);
};

}  // namespace memcap
