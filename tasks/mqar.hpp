// memcap/tasks/mqar.hpp — multi-query associative recall as zoology's generator poses it
// (Arora, Eyuboglu et al. 2023, "Zoology"; github.com/HazyResearch/zoology,
// zoology/data/multiquery_ar.py, multiquery_ar with num_passes = 1 and random_non_queries).
//
// A stream of T tokens over a vocabulary of V symbols: the key symbols are 1 .. V/2 − 1 and
// the value symbols V/2 .. V − 1 (V/2 rounded down). The stream opens with the n pairs,
// key then value (2n tokens; n distinct keys, n distinct values). The rest, T − 2n tokens,
// holds the queries: key j is asked again at token 2n + 2 g_j, its gap g_j drawn from
// 0 .. (T − 2n)/2 − 1 without replacement with probability ∝ α (g + 1)^(α − 1) (zoology's
// power law, α = 0.01: most queries come soon after the pairs, a long tail far away). Every
// other token is filler, uniform over the whole vocabulary.
//
// Every token is written, and every read is taken as the stream is written: the memory runs
// its causal form (Memory::causal; o_t read from the state after the write at t). An untrained
// memory sees each symbol through a fixed random embedding (V unit vectors of width d, drawn
// per cell) and the short-convolution shift of Based and H3: at token t it writes key =
// embedding of x_{t−1}, value = embedding of x_t, and reads with query = embedding of x_t. So
// (key, value) of a pair is written as one write, and the query token reads with the key's
// embedding. Token 0 has no predecessor and writes nothing (T − 1 writes). The read at a
// query token is right when its nearest embedding among all value symbols (V − V/2 of them,
// the candidates) is the answer: chance 1 / (V − V/2).
//
// How it differs from assoc_recall: assoc_recall writes only the n pairs and reads after the
// last one, scored among the n stored values; mqar writes every token — the pairs, the queries
// themselves and the filler — reads in the middle of the stream, and scores among every value
// of the vocabulary. Zoology's trained models learn the embedding and the shift; here both are
// fixed, so mqar measures what the memory's update and read do with zoology's stream.
//
// Parameters: vocab = 8192 (V, zoology's default), length = 256 (T, even), alpha = 0.01,
// queries (how many of the n keys are asked, a random subset; none: every key once, as
// zoology), episodes = 64 (streams per seed). Refused (one line, exit 2): V/2 − 1 < n key
// symbols (V < 2n + 2), an odd T or T < 4n (the pairs and the query region of 2n tokens),
// queries > n, alpha ≤ 0.
#pragma once

#include "tasks/task.hpp"

#include <optional>

namespace memcap {

class Mqar final : public Task {
public:
    explicit Mqar(Spec spec);

    std::int64_t test_episodes(const TaskCell&) const override { return episodes_; }
    std::string native_read_reason() const override {
        return "reads each query as its stream is written (the memory's causal form), not from the final state";
    }
    double chance(const TaskCell&) const override { return 1.0 / static_cast<double>(values()); }
    std::int64_t peak_bytes(const TaskCell& cell) const override;
    /// Rows of Episode::queries: one per written token.
    std::int64_t queries_per_episode(const TaskCell&) const override { return length_ - 1; }
    std::int64_t writes_per_episode(const TaskCell&) const override { return length_ - 1; }
    std::int64_t token_vocab() const override { return vocab_; }

protected:
    void check_cell(const TaskCell& cell) const override;
    void fill(const TaskCell& cell, Split split, std::int64_t index, std::uint64_t held, Episode& e) const override;

private:
    /// Value symbols V/2 .. V − 1.
    std::int64_t values() const { return vocab_ - vocab_ / 2; }
    std::int64_t asked(const TaskCell& c) const { return queries_ ? *queries_ : c.n; }
    /// The embedding of every symbol (V × d unit rows), drawn once per cell.
    const RowMat& embedding(const TaskCell& cell) const;

    std::int64_t vocab_, length_;
    double alpha_;
    std::optional<std::int64_t> queries_;
    std::int64_t episodes_;
    mutable TaskCell cached_{-1, 0, 0};
    mutable RowMat embedding_;
};

}  // namespace memcap
