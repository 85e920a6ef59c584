// memcap/harness/readout.hpp — scoring a memory on a task's episodes.
//
// `native` drives the memory itself: for each scored episode, reset, write
// every pair in order (write_batch), answer every query with read_batch, and
// count a query correct when the read's nearest candidate is its target.
// Scores are kept per slot (one entry with slot −1 for slot-free tasks).
#pragma once

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

/// The readouts `--readout` accepts.
const std::vector<std::string>& readout_names();

/// Scores `memory` on the task's test episodes for `cell` by its own read.
/// A non-finite read makes the outcome an error (never a silent NaN).
CellOutcome native_readout(Memory& memory, const Task& task, const TaskCell& cell);

/// Adds one episode's reads into per-slot scores (index = slot + 1).
void score_reads(const Episode& episode, ConstMatRef reads, std::vector<SlotScore>& by_slot);

}  // namespace memcap
