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
//
// zoology's newer variants, as options (left out: the stream above, bit for bit):
// - updates = u (zoology/data/forgetting_mqar.py, values that change): after the n pairs, u of
//   the keys (a random subset) are written again with a new value, a value symbol other than
//   that key's first (zoology draws it unlike the first value of the j-th key, not of the key
//   updated; here it is the updated key's own); the context is the 2(n + u) tokens, and a query
//   is right when its read is nearest the key's latest value. Refused: u > n, T < 4n + 2u.
// - key_tokens = 2 (zoology/data/compositional_ar.py, two-token keys): n = g² pairs whose keys
//   are every (K1, K2) of g first-part symbols (1 .. V/3 − 1) and g second-part symbols
//   (V/3 .. 2V/3 − 1), in a random order, each with its own value (2V/3 .. V − 1): the stream
//   opens with the n triplets K1 K2 V, then each (K1, K2) is asked once at token 3n + 3g
//   (gaps g drawn as above from 0 .. (T − 3n)/3 − 1), filler elsewhere. Neither part alone
//   names a value. The untrained memory's short convolution then spans two tokens: token t's
//   query is unit(emb(x_{t−1}) + emb(x_t)) (token 0: emb(x_0)), its key the query of token
//   t − 1 and its value emb(x_t), so the value's write is keyed by both parts and the K2 token
//   of a query reads with them; the answer is scored among the V − 2⌊V/3⌋ value symbols.
//   Refused: n not a square, fewer than √n symbols in a key part or n value symbols, an odd T
//   or T < 6n, with updates.
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
    /// Value symbols: V/2 .. V − 1 (two-token keys: 2⌊V/3⌋ .. V − 1).
    std::int64_t values() const { return vocab_ - first_value(); }
    std::int64_t first_value() const { return compose_ ? 2 * (vocab_ / 3) : vocab_ / 2; }
    void fill_compositional(const TaskCell& cell, Split split, std::int64_t index, Episode& e) const;
    std::int64_t asked(const TaskCell& c) const { return queries_ ? *queries_ : c.n; }
    /// The embedding of every symbol (V × d unit rows), drawn once per cell.
    const RowMat& embedding(const TaskCell& cell) const;

    std::int64_t vocab_, length_;
    double alpha_;
    std::optional<std::int64_t> queries_;
    std::int64_t episodes_;
    std::int64_t updates_ = 0;  // forgetting_mqar: keys written again with a new value
    bool compose_ = false;      // compositional_mqar: two-token keys
    mutable TaskCell cached_{-1, 0, 0};
    mutable RowMat embedding_;
};

}  // namespace memcap
