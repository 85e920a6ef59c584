// memcap/tasks/mqar.cpp — see mqar.hpp.
#include "tasks/mqar.hpp"

#include "core/rng.hpp"

#include <cmath>
#include <numeric>

namespace memcap {

Mqar::Mqar(Spec spec)
    : Task(std::move(spec)), vocab_(this->spec().integer("vocab")), length_(this->spec().integer("length")),
      alpha_(this->spec().real("alpha")), episodes_(this->spec().integer("episodes")) {
    if (this->spec().has("queries")) queries_ = this->spec().integer("queries");
}

const RowMat& Mqar::embedding(const TaskCell& c) const {
    if (cached_.d != c.d || cached_.seed != c.seed || embedding_.rows() != vocab_) {
        Rng rng = Rng::stream("mqar/embedding", c.d, c.seed, vocab_);
        embedding_ = rng.unit_rows<RowMat>(vocab_, c.d);
        cached_ = c;
    }
    return embedding_;
}

void Mqar::check_cell(const TaskCell& c) const {
    const std::string n = std::to_string(c.n);
    if (vocab_ / 2 - 1 < c.n)
        refuse("vocab", std::to_string(vocab_),
               "has " + std::to_string(vocab_ / 2 - 1) + " key symbols (1 .. V/2 - 1), fewer than n=" + n + " pairs (needs vocab >= 2n + 2)");
    if (length_ % 2 != 0) refuse("length", std::to_string(length_), "must be even (pairs and queries sit on even tokens)");
    if (length_ < 4 * c.n)
        refuse("length", std::to_string(length_), "is too short for n=" + n + " pairs and their queries (needs length >= 4n)");
    if (queries_ && *queries_ > c.n)
        refuse("queries", std::to_string(*queries_), "asks more keys than the n=" + n + " written (queries <= n)");
    require_distinct_codes(c, "vocab=" + std::to_string(vocab_) + " symbol embeddings", vocab_, 0);
}

std::int64_t Mqar::peak_bytes(const TaskCell& c) const {
    const double d = c.d, t = double(length_), v = double(vocab_), m = double(asked(c));
    // the embedding; the episode's keys, values and queries (T − 1 rows each), its candidates
    // (the value symbols) and the readout's copy of them; the causal outputs; gaps and tokens
    return bytes_of(v * d + 3.0 * t * d + 2.0 * double(values()) * d + scoring_panel_floats(double(values()), d) + t * d +
                        t,
                    4.0 * t + 3.0 * m);
}

void Mqar::fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t, Episode& e) const {
    const RowMat& emb = embedding(c);
    const std::int64_t n = c.n, half = vocab_ / 2, space = (length_ - 2 * n) / 2;
    Rng draw = Rng::stream("mqar/stream", c.n, c.d, c.seed, vocab_, length_, format_real(alpha_), asked(c), static_cast<int>(split), index);
    // n distinct keys of 1 .. V/2 − 1 and n distinct values of V/2 .. V − 1 (partial Fisher–Yates)
    const auto distinct = [&](std::int64_t first, std::int64_t count) {
        std::vector<std::int64_t> pool(static_cast<std::size_t>(count));
        std::iota(pool.begin(), pool.end(), first);
        for (std::int64_t i = 0; i < n; ++i) std::swap(pool[std::size_t(i)], pool[std::size_t(i + draw.below(count - i))]);
        pool.resize(static_cast<std::size_t>(n));
        return pool;
    };
    const std::vector<std::int64_t> keys = distinct(1, half - 1), vals = distinct(half, vocab_ - half);
    // the gaps: n distinct of 0 .. space − 1, drawn one after another with probability ∝ α (g + 1)^(α − 1)
    // among those not yet drawn (numpy's choice without replacement)
    std::vector<double> weight(static_cast<std::size_t>(space));
    for (std::int64_t g = 0; g < space; ++g) weight[std::size_t(g)] = alpha_ * std::pow(double(g + 1), alpha_ - 1.0);
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(length_), -1);
    for (std::int64_t i = 0; i < n; ++i) tokens[std::size_t(2 * i)] = keys[std::size_t(i)], tokens[std::size_t(2 * i + 1)] = vals[std::size_t(i)];
    std::vector<std::int64_t> gap(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        double total = 0.0;
        for (double w : weight) total += w;
        double u = draw.uniform() * total;
        std::int64_t g = 0;
        while (g + 1 < space && (weight[std::size_t(g)] == 0.0 || u >= weight[std::size_t(g)])) u -= weight[std::size_t(g)], ++g;
        while (weight[std::size_t(g)] == 0.0) --g;  // rounding past the last one still in
        weight[std::size_t(g)] = 0.0;
        gap[std::size_t(i)] = g;
        tokens[std::size_t(2 * n + 2 * g)] = keys[std::size_t(i)];
    }
    for (auto& x : tokens)
        if (x < 0) x = draw.below(vocab_);  // filler: any symbol
    // which keys are asked: all (in order), or a random subset of `queries`
    std::vector<std::int64_t> ask(static_cast<std::size_t>(n));
    std::iota(ask.begin(), ask.end(), 0);
    const std::int64_t m = asked(c);
    if (m < n) {
        for (std::int64_t i = 0; i < m; ++i) std::swap(ask[std::size_t(i)], ask[std::size_t(i + draw.below(n - i))]);
        ask.resize(static_cast<std::size_t>(m));
    }
    // the writes of tokens 1 .. T − 1: key = emb(x_{t−1}), value = query = emb(x_t)
    const Eigen::Index w = length_ - 1;
    e.keys.resize(w, c.d), e.values.resize(w, c.d), e.queries.resize(w, c.d);
    for (Eigen::Index t = 1; t < length_; ++t) {
        e.keys.row(t - 1) = emb.row(tokens[std::size_t(t - 1)]);
        e.values.row(t - 1) = emb.row(tokens[std::size_t(t)]);
    }
    e.queries = e.values;
    e.tokens.assign(tokens.begin(), tokens.end());
    e.candidates = emb.bottomRows(vocab_ - half);
    e.target.clear(), e.slot.clear(), e.read_at.clear();
    for (const std::int64_t j : ask) {
        e.read_at.push_back(static_cast<int>(2 * n + 2 * gap[std::size_t(j)] - 1));  // the write of token 2n + 2g is row 2n + 2g − 1
        e.target.push_back(static_cast<int>(vals[std::size_t(j)] - half));
        e.slot.push_back(-1);
    }
}

}  // namespace memcap
