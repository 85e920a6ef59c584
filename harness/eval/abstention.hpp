// memcap/harness/eval/abstention.hpp — deciding that nothing fits: the threshold and its scores.
//
// A task with absent queries (assoc_recall:absent=f) asks some queries for keys
// that were never written. The memory reads as usual; the readout then decides
// "nothing fits" from one decision statistic per query — the read's dot product
// with its nearest candidate (its best candidate's score). A memory that can
// shrink its read when nothing matches (the cache's null slot) lowers it. A query
// is accepted (answered) when the statistic is at or above a threshold, and
// rejected (abstains) below it.
//
// The threshold is chosen on the kThresholdSeeds tuning seeds of the cell
// (kThresholdSeedBase + 0, 1, …; seed numbers no scored seed can have, the same
// numbers as the tuning seeds of harness/exec/tuning.hpp) to maximise balanced
// accuracy, then applied to the scored seed: the choice never sees a scored
// episode, and every seed of a group gets the same threshold.
//
//   balanced accuracy = ½ (present queries accepted and answered right / present
//                          + absent queries rejected / absent)
//   false-accept rate = absent queries accepted / absent
//   AUC               = P(statistic of a present query > an absent one's), ties ½:
//                       threshold-free (Mann–Whitney over the scored queries)
#pragma once

#include "harness/results/cell_result.hpp"

#include <cstdint>
#include <vector>

namespace memcap {

/// The first of the tuning seeds the threshold is chosen on (= kTuningSeedBase).
constexpr std::uint64_t kThresholdSeedBase = std::uint64_t{1} << 40;
/// How many tuning seeds the threshold is chosen on.
constexpr int kThresholdSeeds = 5;

/// The threshold with the highest balanced accuracy on `decisions`: a midpoint between two
/// adjacent distinct statistics, the lowest one (accept all) or just above the highest
/// (reject all); ties go to the lowest threshold. A side with no queries drops out of the
/// balance. 0 for no decisions.
double choose_threshold(const std::vector<Decision>& decisions);

/// The scores of `threshold` on `decisions` (Abstention: counts, rates, balanced accuracy, AUC).
Abstention score_abstention(const std::vector<Decision>& decisions, double threshold);

/// Area under the ROC curve of the statistic, present against absent queries (ties count ½);
/// NaN when either side is empty.
double roc_auc(const std::vector<Decision>& decisions);

}  // namespace memcap
