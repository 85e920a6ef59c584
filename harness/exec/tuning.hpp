// memcap/harness/exec/tuning.hpp — choices made on tuning seeds: the code width and memory settings.
//
// A cell may leave its width open (`d = best`) or a memory parameter that
// declares candidates (`softmax:beta=best`; `memcap list` shows each
// parameter's candidates). For each group of such cells — one (memory, task,
// readout, budget, n), every seed — the candidate combinations race on
// `tuning_seeds` **tuning seeds**, kTuningSeedBase + 0, 1, ...: seed numbers no
// scored seed can have (scored seeds are below 1,000,000), so their episodes
// and memory parameters come from streams the scored cells never draw from, and
// the reported accuracy carries no selection bias. Every combination runs on the
// first tuning seed; the kTuningFinalists with the highest accuracy there (ties:
// the smaller width, then the earlier candidate in the parameter's list) run on
// the others, and the finalist with the highest mean accuracy over all tuning
// seeds (tasks with slots: the mean over slots) wins, ties broken the same way.
// (A race, not every combination on every seed: the wide codes that lose on the
// first seed are the costly cells, and are not run again.) Every cell of the
// group is then rewritten with the choice (d, memory spec) and its `tuned`
// column names what was chosen ("d", "beta", "d,beta").
//
// Default widths for `d = best`: 4, 8, 16, ... up to the cell's budget B (a code
// wider than the whole state cannot be held; HRR's natural width is D = B), each
// one the memory can be built with at that budget (and the task can be posed at)
// whose cell needs at most kTuningMaxCellBytes — rules that do not depend on the
// machine, so the candidates, hence the choice, are the same everywhere. The
// choice depends only on the group and the tuning seeds, so it is the same at
// any thread or rank count and on every resume.
#pragma once

#include "harness/eval/cell.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace memcap {

/// The first tuning seed; tuning seed i is kTuningSeedBase + i.
constexpr std::uint64_t kTuningSeedBase = std::uint64_t{1} << 40;
/// The largest estimated peak (bytes) of a default candidate: wider default widths are
/// skipped, on every machine alike. (A width the user lists is checked against the
/// machine's memory instead, and refused when it cannot run.)
constexpr double kTuningMaxCellBytes = 4e9;
/// How many candidates of a group go on from the first tuning seed to the others.
constexpr std::size_t kTuningFinalists = 3;

/// Every combination a cell that needs tuning tries, in tie order (smaller width first,
/// then candidate order), as cells with seed 0 and nothing left to tune; only those
/// check_cell accepts. UsageError naming the cell when none can run.
std::vector<CellSpec> tuning_candidates(const CellSpec& cell);

/// Tuning cells a group of `candidates` combinations runs on `seeds` tuning seeds (the race).
inline std::size_t tuning_cell_count(std::size_t candidates, int seeds) {
    if (seeds <= 0) return 0;
    return candidates + std::min(candidates, kTuningFinalists) * static_cast<std::size_t>(seeds - 1);
}

/// Throws UsageError when no candidate of the cell can run (a cheap check: builds, no work).
void check_candidates(const CellSpec& cell);

/// How the tuning cells are shared between the processes of one sweep (MPI ranks):
/// process `rank` of `size` computes every size-th tuning cell from its rank on, then
/// `combine` sums the scores element-wise over the processes (each score is computed
/// by exactly one, the others hold 0, so the sum is exact) and `agree` takes the
/// largest status (1: this process failed). One process: computes everything.
struct TuningShare {
    int rank = 0, size = 1;
    std::function<void(std::vector<double>&)> combine;
    std::function<int(int)> agree;
};

/// Makes every choice the cells ask for (see above), computing the tuning cells on
/// `threads` threads, and rewrites the cells. `tuning_seed_offset` shifts the tuning
/// seeds (tests use it to show that the choice depends on them); 0 otherwise.
void resolve_tuning(std::vector<CellSpec>& cells, int threads, bool progress, std::uint64_t tuning_seed_offset = 0,
                    const TuningShare& share = {});

}  // namespace memcap
