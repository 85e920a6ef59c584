// memcap/tasks/stream_recall.hpp — where decays, overwrites and gates pay (beyond the essays).
//
// Three variants of associative recall whose streams hold more than the pairs asked
// for. Keys and values are random unit codes as in assoc_recall; a query is its key
// with the same optional noise (noise = σ per entry, or cosine = c: σ = √((1/c² − 1)/d));
// a read is right when its nearest candidate is the target.
//
// recent_recall (n = W, the window) — the horizon of a fixed state.
//   T = ratio · W distinct pairs are written; queries ask only for keys among the last W
//   written. Lag ℓ = 1 is the newest pair, ℓ = W the oldest asked for. Every value
//   written is a candidate (T of them, chance 1/T): returning an older pair's value is
//   wrong. The lags 1..W are cut into `buckets` equal ranges (fewer when W < buckets);
//   query i asks bucket i mod buckets, at a lag uniform within it, and its slot is the
//   bucket's largest lag, so one cell's rows draw the recall-against-lag curve.
//   Capacity along n is the largest window recalled at ≥ 0.9 over all its lags; the
//   horizon of one curve is its last lag before the first bucket below 0.9 (what a
//   sliding window of R rows gives exactly: R, at any W > R with buckets = W).
//
//   One episode, ratio = 2, W = 2 (T = 4):   write k1→v1 … k4→v4
//     query k4 (slot = lag 1) → v4;  query k3 (slot = lag 2) → v3;  candidates v1..v4
//
// overwrite_recall (n = distinct keys) — replacing a value, not adding to it.
//   n pairs are written once (the first writes, in key order 0..n−1), and r =
//   max(1, round(rewrite · n)) of the keys, a uniform random subset in a random order, are
//   written again, each with a fresh value: n + r writes. The right answer for a rewritten
//   key is its latest value. Every value written is a candidate (n + r, chance 1/(n + r)),
//   so the stale value is wrong.
//   order = interleaved (the default): each rewrite comes at a uniformly random place after
//   its key's first write — rewrite i of key k goes into gap g, uniform in k + 1 .. n of the
//   episode's own stream (between first writes g − 1 and g; after the last when g = n);
//   rewrites sharing a gap keep their random order. So untouched keys are written after
//   rewrites too, and "the latest write" is not "the right answer": recency is not
//   correctness, only "later than the same key's earlier copy" is.
//   order = last: the earlier task, kept to reproduce it — every rewrite after the n first
//   writes (writes n+1 … n+r), targets drawn with replacement, one episode a seed.
//   Query i asks an untouched key (slot 0) when i is even and a rewritten one (slot 1)
//   when i is odd (all rewritten when r = n). Untouched targets are drawn with replacement;
//   interleaved reads the rewritten keys in turn (the j-th rewritten query reads rewrite
//   j mod r), so each episode reads min(r, rewritten queries) distinct rewritten keys, and a
//   seed scores ⌈rewritten / that⌉ episodes: at least `rewritten` (16) rewritten keys a seed,
//   ≥ 160 a cell at 10 seeds even at n = 4 (r = 1: 16 episodes).
//   The tie rule (Episode::tie_tolerance = 0.01): a read r is right only when it is nearer
//   its target t than every other candidate c by more than 1% of their squared separation,
//   ‖r − c‖² − ‖r − t‖² > 0.01 ‖c − t‖² — for a read w·t + (1 − w)·c, a weight w above
//   0.505. A cache reading two copies of one key returns their midpoint (w = 0.5 up to
//   rounding, which a sharp softmax amplifies to a few parts in 10⁴); an additive memory
//   returns their sum. Both are scored wrong, not by the rounding. (A cache with a recency
//   slope, softmax:slope, weights the later copy by more.)
//
//   One episode, n = 3, rewrite = 0.34 (r = 1, key 1 drawn, gap 2):
//     write k0→v0, k1→v1, k1→v1', k2→v2      candidates v0, v1, v1', v2
//     query k0 (slot 0) → v0;  query k1 (slot 1) → v1'
//   order = last writes k0→v0, k1→v1, k2→v2, k1→v1'.
//
// salient_recall (n = marked pairs) — what a gate buys, for every memory or for none.
//   n marked pairs and distractors · n distractor pairs, at uniformly random positions of
//   the stream (a uniform n-subset of the n(1 + distractors) writes holds the marked
//   ones). Marked values are random unit codes on coordinates 1..d−1 (coordinate 0 is
//   0); a distractor's value is e₀ + u, u a random unit code on coordinates 1..d−1, so it
//   carries as much content as a marked value plus the mark. Queries ask only marked keys
//   (drawn with replacement); the candidates are the n marked values (chance 1/n).
//   Capacity counts marked pairs at the given distractor ratio. The gate is the task's,
//   the same for every memory in a frame (no memory reads the mark itself: the task
//   declares no salience feature, core/inputs.hpp, so a memory's own gate=salience has
//   step 1 here):
//     gate = none (the default)  every memory writes all n(1 + distractors) pairs;
//     gate = all                 an oracle gate skips every distractor before any memory
//                                sees it: the cache, the grids, HRR and the gated grids
//                                alike write only the n marked pairs, in stream order
//                                (a skipped write leaves the state as it was: Δ = 0).
//   Both frames draw the same pairs, positions, targets and noise: their episodes are
//   paired, and gate=all's writes are gate=none's marked rows.
//
//   One episode, n = 2, distractors = 1 (marked at positions 1 and 2):
//     gate=none: write k0→e₀+u0, k1→v1, k2→v2, k3→e₀+u3     candidates v1, v2
//     gate=all:  write k1→v1, k2→v2                          query k1 → v1; k2 → v2

// assoc_recall:passes=p (tasks/assoc_recall.hpp) writes its n pairs p times in order.
//
// recent_recall and overwrite_recall are scored by the memory's own read only: their slots
// (lag buckets; untouched/rewritten) do not fix the answer, and the probe fits one answer per
// slot from the state (Task::native_read_reason). salient_recall has no slots: the probe reads it.
//
// Parameters: recent_recall  ratio = 8, buckets = 8, queries = 64, noise, cosine
//             overwrite_recall  rewrite = 0.25, order = interleaved, rewritten = 16, queries = 64, noise, cosine
//             salient_recall  distractors = 3, queries = 32, noise, cosine, gate = none
// The pairs, the positions, the targets and the noise come from separate streams.
#pragma once

#include "tasks/task.hpp"

namespace memcap {

/// What the three share: the number of queries and the query noise.
class StreamTask : public Task {
public:
    explicit StreamTask(Spec spec);
    std::int64_t queries_per_episode(const TaskCell&) const override { return queries_; }

protected:
    /// noise and cosine both given is refused; the codes must differ (d >= 2, or d >= 3
    /// when coordinate 0 is reserved).
    void check_noise(const TaskCell& c) const;
    /// The per-entry noise σ at this cell's width (from noise or cosine).
    double sigma(const TaskCell& c) const;
    /// Queries = unit(keys of the targets + σ z), from the stream `name`.
    void make_queries(const TaskCell& c, const char* name, int split, std::int64_t index, const std::vector<int>& key_rows,
                      Episode& e) const;
    std::int64_t queries_;
    double noise_, cosine_;
};

class RecentRecall final : public StreamTask {
public:
    explicit RecentRecall(Spec spec);
    bool has_slots() const override { return true; }
    std::string native_read_reason() const override {
        return "asks a different key in each lag bucket (a slot does not fix the answer, as the probe's one answer per slot needs)";
    }
    double chance(const TaskCell& c) const override { return 1.0 / static_cast<double>(writes_per_episode(c)); }
    std::int64_t writes_per_episode(const TaskCell& c) const override { return ratio_ * c.n; }
    std::int64_t peak_bytes(const TaskCell& c) const override;
    /// The lag buckets of window n: buckets (capped at n), bucket b = lags (⌊b n/B⌋, ⌊(b+1) n/B⌋].
    std::int64_t buckets(const TaskCell& c) const { return std::min<std::int64_t>(buckets_, c.n); }

protected:
    void check_cell(const TaskCell& c) const override;
    void fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t held, Episode& e) const override;

private:
    std::int64_t ratio_, buckets_;
};

class OverwriteRecall final : public StreamTask {
public:
    explicit OverwriteRecall(Spec spec);
    bool has_slots() const override { return true; }
    std::string native_read_reason() const override {
        return "asks a different key in each slot (untouched, rewritten), so a slot does not fix the answer, as the probe's one answer per slot needs";
    }
    double chance(const TaskCell& c) const override { return 1.0 / static_cast<double>(writes_per_episode(c)); }
    std::int64_t writes_per_episode(const TaskCell& c) const override { return c.n + rewrites(c); }
    std::int64_t peak_bytes(const TaskCell& c) const override;
    /// Keys written again: max(1, round(rewrite · n)), at most n.
    std::int64_t rewrites(const TaskCell& c) const;
    /// Distinct rewritten keys one episode reads (interleaved): min(r, the rewritten queries);
    /// 0 for order=last, whose draw with replacement promises none.
    std::int64_t rewritten_read(const TaskCell& c) const;
    /// ⌈rewritten / rewritten_read⌉ episodes a seed (interleaved), so a seed reads at least
    /// `rewritten` rewritten keys; 1 for order=last.
    std::int64_t test_episodes(const TaskCell& c) const override;

protected:
    void check_cell(const TaskCell& c) const override;
    void fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t held, Episode& e) const override;

private:
    double rewrite_;
    bool last_;               // order=last: every rewrite after the n first writes (the earlier task)
    std::int64_t rewritten_;  // rewritten keys read per seed, at least (interleaved)
    mutable RowMat drawn_keys_, drawn_values_;  // interleaved: the pairs in draw order (one cell, one thread)
};

class SalientRecall final : public StreamTask {
public:
    explicit SalientRecall(Spec spec);
    /// Random content keys; value coordinate 0 marks a distractor, but no salience feature is
    /// declared: the gate is the task's (gate=all), never one memory's.
    InputDescription inputs(const TaskCell& c) const override { return {c.d, c.d, false, std::nullopt}; }
    double chance(const TaskCell& c) const override { return 1.0 / static_cast<double>(c.n); }
    /// The writes a memory sees: every pair, or (gate=all) the n marked ones.
    std::int64_t writes_per_episode(const TaskCell& c) const override { return gate_all_ ? c.n : c.n * (1 + distractors_); }
    std::int64_t peak_bytes(const TaskCell& c) const override;

protected:
    void check_cell(const TaskCell& c) const override;
    void fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t held, Episode& e) const override;

private:
    std::int64_t distractors_;
    bool gate_all_;  // gate=all: the distractors are skipped before any memory writes
};

}  // namespace memcap
