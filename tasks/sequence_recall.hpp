// memcap/tasks/sequence_recall.hpp — lag recall and copying (essay 004, Part 1).
//
// A stream of n tokens drawn uniformly from a vocabulary of V fixed random
// unit codes (V = 16, chance 1/V). Token t is written as the pair
// (p_t, c(x_t)): its position code p_t — a fixed random unit vector per
// position — is the key, its token code the value. Content-addressed memories
// read a token back by querying with its position code; the rotation RNN
// ignores the keys (they are positional) and is read by the probe.
//
//   lag_recall  (n = T, the stream length; essay: T = 80) — for each lag
//               k = 1..min(lags, n), recall the token k steps back; lag 1 is
//               the newest. Slot = k.
//   copying     (n = L) — recall the token at every position 1..L (first = 1).
//               Slot = position; the essay's number is the mean over positions.
//
// One episode, lag_recall, n = 4, lags = 2, vocabulary {A, B, C, ...}:
//
//     write  p1 → B,  p2 → A,  p3 → A,  p4 → C
//     query  p4 → C (slot = lag 1),  p3 → A (slot = lag 2)
//
// The codes (vocabulary and positions) are fixed per seed — shared by the
// training and test episodes of a probe — and new for every seed; the tokens
// are new in every episode.
//
// Parameters: vocab = 16, lags = 60 (lag_recall), episodes = 1000 (scored per seed).
#pragma once

#include "tasks/task.hpp"

#include <algorithm>

namespace memcap {

class SequenceRecall final : public Task {
public:
    enum class Mode { Lag, Copy };
    SequenceRecall(Spec spec, Mode mode);

    /// Keys are position codes.
    InputDescription inputs(const TaskCell& c) const override { return {c.d, c.d, true, std::nullopt}; }
    bool has_slots() const override { return true; }
    std::int64_t test_episodes(const TaskCell&) const override { return episodes_; }
    double chance(const TaskCell&) const override { return 1.0 / static_cast<double>(vocab_); }
    std::int64_t peak_bytes(const TaskCell& cell) const override;
    std::int64_t queries_per_episode(const TaskCell& c) const override {
        return mode_ == Mode::Lag ? std::min(lags_, c.n) : c.n;
    }

protected:
    /// The vocab token codes (the candidates) must differ: d >= 2 unless vocab = 1.
    void check_cell(const TaskCell& cell) const override;
    void fill(const TaskCell& cell, Split split, std::int64_t index, std::uint64_t held, Episode& e) const override;

private:
    struct Codes {
        TaskCell cell{-1, 0, 0};
        RowMat vocabulary, positions;
        std::uint64_t tag = 0;  // Episode::fixed_parts of these codes
    };
    const Codes& codes(const TaskCell& cell) const;

    Mode mode_;
    std::int64_t vocab_, lags_, episodes_;
    mutable Codes codes_;  // the last cell's codes: every episode of a cell shares them
    mutable std::vector<int> token_;  // scratch: one episode's tokens
};

}  // namespace memcap
