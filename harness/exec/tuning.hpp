// memcap/harness/exec/tuning.hpp — choices made on tuning seeds: the code width and memory settings.
//
// A cell may leave its width open (`d = best`) or a memory parameter that
// declares candidates (`softmax:beta=best`; `memcap list` shows each
// parameter's candidates). For each group of such cells — one (memory, task,
// readout, budget, n), every seed — every candidate combination is run on
// `tuning_seeds` **tuning seeds**, kTuningSeedBase + 0, 1, ...: seed numbers no
// scored seed can have (scored seeds are below 1,000,000), so their episodes
// and memory parameters come from streams the scored cells never draw from, and
// the reported accuracy carries no selection bias. The combination with the
// highest mean accuracy over the tuning seeds (tasks with slots: the mean over
// slots) wins; ties go to the smaller width, then to the earlier candidate in
// the parameter's list. Every cell of the group is then rewritten with the
// choice (d, memory spec) and its `tuned` column names what was chosen
// ("d", "beta", "d,beta").
//
// Default widths for `d = best`: 4, 8, 16, ... up to 4096, each one the memory
// can be built with at the cell's budget (and the task can be posed at). The
// choice depends only on the group and the tuning seeds, so it is the same at
// any thread or rank count and on every resume.
#pragma once

#include "harness/eval/cell.hpp"

#include <cstdint>
#include <vector>

namespace memcap {

/// The first tuning seed; tuning seed i is kTuningSeedBase + i.
constexpr std::uint64_t kTuningSeedBase = std::uint64_t{1} << 40;
/// The largest default width tried by `d = best`.
constexpr int kMaxDefaultWidth = 4096;

/// Every combination a cell that needs tuning tries, in tie order (smaller width first,
/// then candidate order), as cells with seed 0 and nothing left to tune; only those
/// check_cell accepts. UsageError naming the cell when none can run.
std::vector<CellSpec> tuning_candidates(const CellSpec& cell);

/// Throws UsageError when no candidate of the cell can run (a cheap check: builds, no work).
void check_candidates(const CellSpec& cell);

/// Makes every choice the cells ask for (see above), computing the tuning cells on
/// `threads` threads, and rewrites the cells. `tuning_seed_offset` shifts the tuning
/// seeds (tests use it to show that the choice depends on them); 0 otherwise.
void resolve_tuning(std::vector<CellSpec>& cells, int threads, bool progress, std::uint64_t tuning_seed_offset = 0);

}  // namespace memcap
