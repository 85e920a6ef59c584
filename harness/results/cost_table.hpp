// memcap/harness/results/cost_table.hpp — the cost model beside a summary CSV.
//
// `memcap cost SUMMARY.csv` reads `memcap aggregate`'s summary (columns by name) and writes,
// per distinct (memory spec, task spec, budget, d, n) — one row per cell setting, whatever its
// slots — the FLOPs the memory's table entry declares (MemoryEntry::cost, the model that also
// prices the width race and the benchmarks' roofline) for the episode the task writes: the
// writes per episode (Task::writes_per_episode), FLOPs per write (a batched write of all of
// them from reset, divided by their number) and per read (a batched read of the task's queries).
// A memory that spends compute to save state (a network trained while it reads) shows it here
// beside its capacity. The FLOPs are a model, not a measurement: bench/ times them.
#pragma once

#include <string>
#include <vector>

namespace memcap {

/// The cost table's CSV for the summaries at `summary_paths` (rows in file order, each setting
/// once). UsageError: an unreadable file, a per-seed results CSV, a missing column, a spec or
/// number this build cannot parse.
std::string cost_table(const std::vector<std::string>& summary_paths);

}  // namespace memcap
