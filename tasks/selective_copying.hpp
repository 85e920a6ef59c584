// memcap/tasks/selective_copying.hpp — selective copying (Gu & Dao 2023, §3.1; beyond the essays).
//
// A stream of n tokens: M content tokens, drawn uniformly from a vocabulary of
// V random unit codes, at random positions among n − M blank (noise) tokens.
// After the stream, recall the content tokens in order: slot j = the j-th
// content token. The answer set is the V content codes plus the blank, so a
// read that returns noise is wrong (chance 1/(V + 1)).
//
// Codes: the blank token is e₀ (unit vector on coordinate 0) and content codes
// have coordinate 0 equal to 0 — coordinate 0 is memcap's token-class feature,
// the one a selective memory may gate on (memories/selective/selective_state.hpp).
//
// Keys: every token is written under the code of its content ordinal — the
// number of content tokens seen so far (a count a network can keep) — so the
// j-th content token and the blanks that follow it share key o_j, and blanks
// before any content use o_0. Query j is o_j. A memory that writes every token
// lets the blanks pile onto (or overwrite) the content under the same key; a
// memory that skips them keeps it. The rotation RNN ignores keys (they are
// positional) and is read by the probe, which must find the j-th content
// token at a position that changes from episode to episode.
//
// One episode, n = 6, M = 2:   tokens  _ B _ _ A _
//                              keys    o0 o1 o1 o1 o2 o2
//     query o1 → B (slot 1),  o2 → A (slot 2)
//
// Parameters: vocab = 16, content = 16 (M ≤ n), episodes = 1000 (scored per seed).
#pragma once

#include "tasks/task.hpp"

namespace memcap {

class SelectiveCopying final : public Task {
public:
    explicit SelectiveCopying(Spec spec);

    /// Keys are ordinal codes; value coordinate 0 marks the blank (e₀).
    InputDescription inputs(const TaskCell& c) const override { return {c.d, c.d, true, 0}; }
    bool has_slots() const override { return true; }
    std::int64_t test_episodes(const TaskCell&) const override { return episodes_; }
    double chance(const TaskCell&) const override { return 1.0 / static_cast<double>(vocab_ + 1); }
    std::int64_t peak_bytes(const TaskCell& cell) const override;
    std::int64_t queries_per_episode(const TaskCell&) const override { return content_; }

protected:
    /// content <= n; d >= 2 (coordinate 0 marks the blank); the vocab content codes live
    /// in the other d - 1 coordinates and must differ: d >= 3 unless vocab = 1.
    void check_cell(const TaskCell& cell) const override;
    void fill(const TaskCell& cell, Split split, std::int64_t index, std::uint64_t held, Episode& e) const override;

private:
    struct Codes {
        TaskCell cell{-1, 0, 0};
        RowMat answers, ordinal;  // vocab + 1 answer codes (the blank last), M + 1 ordinal codes
    };
    const Codes& codes(const TaskCell& cell) const;

    std::int64_t vocab_, content_, episodes_;
    mutable Codes codes_;  // the last cell's codes: every episode of a cell shares them
};

}  // namespace memcap
