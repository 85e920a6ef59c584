// memcap/tasks/assoc_recall.hpp — associative recall (essay 004, Part 3).
//
// Write n random (key, value) pairs, then query stored keys, drawn with
// replacement. A read is correct when it is nearest (Euclidean) to the right
// value among all n stored values; chance is 1/n. Keys and values are N(0, I)
// vectors normalised to unit length.
//
// One episode, n = 3, queries = 2:
//
//     write  k0 → v0,  k1 → v1,  k2 → v2
//     query  k2  → read r; correct if |r − v2| < |r − v0|, |r − v1|
//     query  k0  → read r; correct if |r − v0| < |r − v1|, |r − v2|
//
// Parameters:
//   queries = 32   reads per episode (targets drawn with replacement)
//   noise   = 0    σ: the query is unit(k + σ z), z ~ N(0, I) (β sweep: 0.12)
//   cosine  = 1    the same noise set by its expected query–key cosine c instead, so it
//                  means the same at every width: σ = √((1/c² − 1)/d), i.e. σ√d fixed
//                  (c ≈ 0.72 is σ = 0.12 at d = 64); 1 = none; not together with noise
//   control = one of
//     none               the task as above;
//     shuffled_query     each query is replaced by a random unit vector unrelated
//                        to any key: accuracy must fall to chance (1/n);
//     key_shuffle        the keys are written in a random order against the
//                        values, (k_π(i), v_i), breaking every pair: chance;
//     value_shuffle      the same from the other side, (k_i, v_π(i)): chance;
//     paired_permutation the pairs are written in a random order, (k_π(i), v_π(i)):
//                        an order-free memory (cache without eviction, grid,
//                        HRR) reads exactly as with control=none, up to rounding;
//     key_collision      pairs 2m and 2m+1 share one key with different values;
//                        the right answer is the later-written value (an
//                        update). An order-free memory returns a blend of the
//                        two (distance ≈ 0.71 from each), so it is right about
//                        half the time; the delta rule overwrites and is right;
//     structural_mask    each read may not attend to the pair it asks for (its
//                        target is hidden, Episode::hidden): the essay-000 mask
//                        on the read path. Only memories that keep pairs apart
//                        can hide one (the softmax cache, native read); it must
//                        fall to chance or below. Other memories and the probe
//                        are refused up front.
//   absent  = none a fraction f in [0, 1) of the queries (round(f · queries) of them, at
//                  random places) ask for a key never written: a fresh unit code, target
//                  −1. The readout must also decide that nothing fits (harness/eval/
//                  abstention.hpp): accuracy is then over the present queries, and the
//                  false-accept rate, balanced accuracy and AUC are reported beside it.
//                  Only with control=none or paired_permutation; native readout only.
//
// The pairs, the targets, the noise and the random queries come from separate
// streams, so changing `queries`, `noise` or `control` leaves the rest of the
// episode unchanged (paired comparisons across those options).
#pragma once

#include "tasks/task.hpp"

namespace memcap {

class AssocRecall final : public Task {
public:
    explicit AssocRecall(Spec spec);

    double chance(const TaskCell& cell) const override { return 1.0 / static_cast<double>(cell.n); }
    bool hides_pairs() const override { return control_ == "structural_mask"; }
    bool has_absent() const override { return absent_ > 0.0; }
    std::int64_t peak_bytes(const TaskCell& cell) const override;
    std::int64_t queries_per_episode(const TaskCell&) const override { return queries_; }

protected:
    /// The n candidate values must differ: d >= 2 unless n = 1 (Task::require_distinct_codes).
    void check_cell(const TaskCell& cell) const override;
    void fill(const TaskCell& cell, Split split, std::int64_t index, std::uint64_t held, Episode& e) const override;

private:
    std::int64_t queries_;
    double noise_;
    double cosine_;
    /// The per-entry noise σ at this cell's width (from noise or cosine).
    double sigma(const TaskCell& c) const;
    std::string control_;
    double absent_;
    /// Queries that ask for a key never written: round(absent · queries).
    std::int64_t absent_count() const;
};

}  // namespace memcap
