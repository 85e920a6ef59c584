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
//   vocab   = 0    V: 0 draws fresh Gaussian keys every episode (as above). V >= n makes
//                  the keys n distinct symbols of a vocabulary of V, drawn afresh per
//                  episode, each symbol's key a row of one V x d embedding table (the
//                  rows normalised); values stay fresh random codes every episode, and
//                  a query is the asked-for symbol's key plus the noise.
//   keys    = random   where the table comes from (only with vocab >= 1):
//     random   one Gaussian row per symbol, drawn per seed (the same in training
//              and test episodes);
//     frame    a unit-norm tight frame of V vectors in d dimensions (tight_frame):
//              orthonormal when V <= d, else at the Welch bound; the same for every seed;
//     learned  trained per cell through the memory's own write and read on training
//              episodes (Split::Train) of the cell's seed, starting from the random
//              table (harness/eval/key_training.hpp), then scored on the test episodes.
//              A training episode queries every stored symbol once, in write order (so
//              each step's gradient reaches every key written); test episodes draw
//              `queries` targets as always.
//   passes  = none p: the n pairs are written p times, in the same order (the context read
//                  again before the queries; Zoology's "just read twice"). The candidates stay
//                  the n values. For a cache the copies cost budget; an additive memory adds
//                  the same sum p times (its reads scale, its ranking does not change); the
//                  delta rule at β = 1 runs p sweeps of the cyclic Kaczmarz iteration on
//                  S φ(k_i) = v_i, which tends to the least-squares memory (docs/theory.md).
//                  none (left out) writes them once. Not with keys=learned or
//                  control=structural_mask.
//   steps = 1000, lr = 0.01, temp = 0.1   keys=learned's Adam steps (one training
//              episode each), learning rate and cross-entropy temperature.
//
// One episode with vocab = 5, n = 2, queries = 1 (symbols drawn without replacement):
//
//     symbols 3, 0:  write  E3 → v0,  E0 → v1      (E = the table's rows, unit length)
//     query  unit(E0 + σ z) → read r; correct if |r − v1| < |r − v0|
//
// Wide codes (d >= 16384, kSpectralWidth) with fresh Gaussian keys (vocab=0): keys, values
// and query noise are drawn as their spectra (tasks/spectral_codes.hpp) — the same
// distribution, other draws than below that width — so a memory that works in the
// Fourier domain (HRR at D = d) reads the plain task (control=none, no absent queries) a
// code at a time without materialising the episode (spectral_episode; at d = 2^20 an
// episode of 16384 pairs would hold 137 GB).
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
    std::int64_t writes_per_episode(const TaskCell& c) const override { return passes_ * c.n; }
    std::optional<KeyTraining> key_training() const override;
    RowMat initial_key_table(const TaskCell& cell) const override;
    std::optional<SpectralEpisode> spectral_episode(const TaskCell& cell, Split split, std::int64_t index) const override;
    void set_key_table(const TaskCell& cell, const RowMat& table) override;

protected:
    /// The n candidate values must differ: d >= 2 unless n = 1 (Task::require_distinct_codes).
    void check_cell(const TaskCell& cell) const override;
    void fill(const TaskCell& cell, Split split, std::int64_t index, std::uint64_t held, Episode& e) const override;

private:
    std::int64_t queries_;
    std::int64_t passes_;
    double noise_;
    double cosine_;
    /// The per-entry noise σ at this cell's width (from noise or cosine).
    double sigma(const TaskCell& c) const;
    std::string control_;
    double absent_;
    /// Queries that ask for a key never written: round(absent · queries).
    std::int64_t absent_count() const;
    /// Codes drawn in the Fourier domain: d >= kSpectralWidth with fresh Gaussian keys (vocab=0).
    bool spectral_codes(const TaskCell& c) const;
    std::int64_t vocab_;
    std::string keys_;
    std::int64_t steps_;
    double lr_, temp_;
    /// The key table's rows, normalised, for table_cell_ (random and frame: drawn on first
    /// use per cell; learned: installed by set_key_table).
    mutable RowMat table_;
    mutable TaskCell table_cell_{-1, 0, 0};
    const RowMat& unit_table(const TaskCell& c) const;
    /// Scratch for drawing n distinct symbols (a partial Fisher–Yates over 0..V-1).
    mutable std::vector<int> order_;
};

/// A unit-norm tight frame of `count` vectors in `d` dimensions (rows, count × d):
/// Σ f_i f_iᵀ = (count/d) I with |f_i| = 1, so its frame potential Σ_{i≠j} (f_i·f_j)² is
/// the Welch bound count²/d − count, the least any count unit vectors in d dimensions
/// reach. count <= d: the first `count` standard basis vectors (orthonormal). count > d:
/// a harmonic frame, f_j = √(2/d) [cos(2π j k/count), sin(2π j k/count)] over ⌊d/2⌋
/// distinct frequencies k drawn once from 1 .. ⌈count/2⌉ − 1 by a fixed stream (the
/// consecutive frequencies 1 .. d/2 would make neighbouring vectors nearly parallel);
/// when d is odd the pairs are scaled by √((d−1)/d) and a constant coordinate √(1/d) is
/// appended. Deterministic: the same frame for every seed.
RowMat tight_frame(std::int64_t count, int d);

}  // namespace memcap
