// memcap/harness/eval/cell.hpp — one cell, checked and evaluated into one CellResult.
//
// A cell is one (memory spec, task spec, readout, budget, d, n, seed). It is
// computed by one thread from its own random streams, so its result does not
// depend on which thread, process or rank computes it, or when.
//
// Two steps, both here: resolve_cell looks up what the cell's stages need —
// its memory's entry and size, its task object, its readout — once, and
// refuses (UsageError, one line) a cell that cannot run: a budget below the
// backend's minimum, a task that cannot be posed at this n or d, a combination
// the memory or readout cannot do; check_fits adds this machine's memory. So
// every grid is checked before any work, and the resolution is handed along to
// the estimates and to run_cell, which computes the cell. A
// measured failure (a non-finite read, a probe that cannot be solved) is an
// error outcome in the result; anything else that goes wrong is a bug and
// propagates as an exception.
#pragma once

#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/results/cell_result.hpp"
#include "memories/memory.hpp"
#include "memories/registry.hpp"
#include "tasks/task.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

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
    std::string tuned;              // what was chosen, e.g. "d=64,beta=8" (CSV column `tuned`); empty: nothing

    bool needs_tuning() const { return tuning_seeds > 0; }
};

/// A cell with `readout` resolved for its memory (`auto` becomes native or probe).
CellSpec make_cell(const Spec& memory, const Spec& task, const Spec& readout, std::optional<std::int64_t> budget_floats,
                   int d, std::int64_t n, std::uint64_t seed);

/// The cell in words, for messages: "softmax:beta=16 assoc_recall:... readout=native budget=natural d=64 n=8 seed=0".
std::string cell_label(const CellSpec& cell);
/// A cell's group is the cell without its seed: the cells of a group share one resolution
/// and one tuning choice (harness/exec/tuning.hpp), and the groups that differ in n only
/// form a ladder. same_but_seed is that identity (every field but the seed equal);
/// SameGroupOrder orders cells by it (a map keyed by group); group_label names a group in words.
bool same_but_seed(const CellSpec& a, const CellSpec& b);
struct SameGroupOrder {
    bool operator()(const CellSpec& a, const CellSpec& b) const;
};
/// The cell's group in words, for messages: its label without the seed.
std::string group_label(const CellSpec& cell);

/// Builds the cell's memory for its task (shape from the task, budget from the cell).
std::unique_ptr<Memory> build_memory(const CellSpec& cell, const Task& task);

struct ReadoutEntry;

/// A cell with what its stages look up, looked up once: its memory's table entry and size,
/// its task object, its readout's entry, its shape and its estimated peak. Made by
/// resolve_cell (the check: it refuses a cell that cannot run) and handed along the stages
/// — the fit on this machine, the estimates, the run, the result — so none looks a name up
/// again. Nothing here depends on the seed: the seeds of a group share one resolution.
struct ResolvedCell {
    CellSpec cell;  // the cell resolved (run_cell takes each cell's own spec: its seed, its `tuned`)
    const MemoryEntry* memory = nullptr;
    const ReadoutEntry* readout = nullptr;
    /// For the questions that draw nothing (inputs, sizes, checks). A run draws from a task
    /// object of its own (tasks keep the last cell's codes), made from this one's spec.
    std::shared_ptr<const Task> task;
    MemoryShape shape;
    MemorySize size;         // the memory's sizing function at `shape`, the budget checked
    bool streams = false;    // episodes streamed as spectra (readout.hpp): no episode is held
    double peak_bytes = 0;   // estimated peak of the cell: its memory's and its task's

    TaskCell at(std::uint64_t seed) const { return TaskCell{cell.n, cell.d, seed}; }
};
/// One resolution per cell, shared by the cells that differ in the seed only; null for a
/// cell whose choices are still to make (d = best, key = best).
using ResolvedCells = std::vector<std::shared_ptr<const ResolvedCell>>;

/// Resolves the cell: UsageError (one line) when it cannot run — a budget below the
/// backend's minimum, a task that cannot be posed at this n or d, a combination the memory
/// or readout cannot do. Builds nothing; does not look at this machine's memory (check_fits).
/// `checks` false: only what the sizing function refuses (run_cell on a cell as given).
std::shared_ptr<const ResolvedCell> resolve_cell(const CellSpec& cell, bool checks = true);
/// UsageError when the cell's estimated peak exceeds 80% of this machine's memory.
void check_fits(const ResolvedCell& cell);

/// What names the one test episode of a cell read through the native readout (task
/// spec, n, d, seed): cells with the same key, whatever their memory, budget or
/// readout parameters, read the same episode, and the native readout reuses the last
/// one a thread filled (readout.cpp). Empty for a cell with more test episodes or
/// another readout: nothing to share (run_cells_unordered keeps it a work item of its own).
std::string shared_episode_key(const ResolvedCell& r, std::uint64_t seed);
/// Whether shared_episode_key(r, seed) is non-empty: the key's conditions without its text.
bool shares_episode(const ResolvedCell& r, std::uint64_t seed);

/// A rough measure of the cell's work, for progress estimates only: the FLOPs the memory's
/// cost model declares for an episode's write and read, plus the native read's cleanup,
/// times the scored episodes (without a cost model: n × state size × scored episodes), plus
/// n × state × training rows for the probe. Never affects results.
double cell_work(const ResolvedCell& r, std::uint64_t seed);

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
/// run_cell through the cell's resolution (`r`, made for this cell or another seed of its
/// group, or for the tuning candidate it was given): `cell` gives the seed and the labels.
CellResult run_cell(const ResolvedCell& r, const CellSpec& cell);

/// A cell that could not allocate its memory: a UsageError (exit status 2) whose one line
/// names the cell, its estimated peak and what to lower (--threads, the budget, n, d).
struct OutOfMemory : UsageError {
    explicit OutOfMemory(const CellSpec& cell);
    OutOfMemory(const CellSpec& cell, double peak_bytes);  // the estimate known (0: none)
    static std::string message(const CellSpec& cell);
    static std::string message(const CellSpec& cell, double peak_bytes);
};

}  // namespace memcap
