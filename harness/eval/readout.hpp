// memcap/harness/eval/readout.hpp — scoring a memory on a task's episodes.
//
// Readouts are named by spec strings like memories and tasks:
//   native                       the memory's own read: for each scored episode,
//                                reset, write every pair in order (write_batch),
//                                answer every query with read_batch; a query is
//                                correct when the read's nearest candidate is its target;
//   probe:train=2000,ridge=1e-06 a least-squares map from the state (probe.hpp);
//   auto (default)               native where the backend has a meaningful read,
//                                the probe otherwise (the rotation RNN).
// Scores are kept per slot (one entry with slot −1 for slot-free tasks).
#pragma once

#include "core/spec.hpp"
#include "memories/memory.hpp"
#include "tasks/task.hpp"

#include <string>
#include <vector>

namespace memcap {

struct SlotScore {
    int slot = -1;
    std::int64_t queries = 0;
    std::int64_t correct = 0;
    double target_dist_sum = 0.0;  // Σ ‖read − target‖ over the slot's queries
};

/// What one (memory, task, budget, n, seed) cell produced.
struct CellOutcome {
    std::vector<SlotScore> slots;  // in slot order
    std::int64_t state_floats = 0;
    std::int64_t param_floats = 0;
    bool ok = true;
    std::string message;  // why the cell failed, when !ok
};

/// The readouts `--readout` accepts, in `memcap list` order.
const std::vector<Schema>& readout_schemas();
/// Parses and binds a readout spec string (UsageError listing the known readouts).
Spec parse_readout_spec(const std::string& text);
/// The readout actually used for `memory_name`: `auto` becomes native or probe.
Spec resolve_readout(const Spec& readout, const std::string& memory_name);

/// Scores `memory` on the task's test episodes for `cell` by its own read.
/// A non-finite read makes the outcome an error (never a silent NaN).
CellOutcome native_readout(Memory& memory, const Task& task, const TaskCell& cell);

/// Adds one episode's reads into per-slot scores (index = slot + 1).
void score_reads(const Episode& episode, ConstMatRef reads, std::vector<SlotScore>& by_slot);

}  // namespace memcap
