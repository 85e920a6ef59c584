// memcap/harness/eval/key_training.hpp — training a task's key table through a memory.
//
// For assoc_recall:keys=learned the keys are rows of a V × d embedding table (one per
// symbol), and the table is trained per cell before the cell is scored:
//
//   for step t = 0 .. steps−1:
//     episode = training episode t of the cell's seed (Split::Train: fresh symbols,
//               fresh values, every stored symbol queried once with the task's query
//               noise), keys = table rows normalised
//     reset; write_batch(keys, values); read_batch(queries) → reads R   (the memory's own)
//     loss = mean over queries of the cross-entropy of softmax_j(−‖r_i − c_j‖² / τ)
//            against the target among the n candidates (the comparison the native
//            readout makes: its argmax is the nearest candidate)
//     Memory::backward → ∂L/∂keys, ∂L/∂queries; through each query's normalisation and
//            noise (q = unit(k_target + σz)) to its key, through each key's
//            normalisation (k = unit(E_s)) to the table row E_s
//     Adam (β1 = 0.9, β2 = 0.999, ε = 1e-8, bias-corrected) on the whole table
//
// The trainer reads training episodes only: the test episodes, which the cell is
// scored on, play no part (tested). The starting table is the task's random table of
// the seed (keys=random), so step 0 is where random keys are. A non-finite loss or
// gradient stops training: the cell is then a measured failure (an error row).
#pragma once

#include "memories/memory.hpp"
#include "tasks/task.hpp"

#include <string>

namespace memcap {

struct TrainedKeys {
    RowMat table;           // vocab × d, rows as trained (not normalised)
    bool ok = true;
    std::string message;    // why training failed, when !ok
    double first_loss = 0;  // the loss of step 0 and of the last step (diagnostics)
    double last_loss = 0;
};

/// Trains `task`'s key table for `cell` through `memory` (its table entry declares
/// `backward`), with the settings task.key_training() gives. Leaves the trained table
/// installed in `task` (set_key_table). Deterministic: the same cell gives the same bits.
TrainedKeys train_keys(Memory& memory, Task& task, const TaskCell& cell);

}  // namespace memcap
