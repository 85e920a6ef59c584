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
    if (this->spec().has("updates")) updates_ = this->spec().integer("updates");
    if (this->spec().has("key_tokens")) compose_ = this->spec().integer("key_tokens") == 2;
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
    if (compose_) {
        if (updates_ > 0) refuse("updates", std::to_string(updates_), "cannot be combined with key_tokens=2 (zoology poses the two apart)");
        std::int64_t g = 0;
        while ((g + 1) * (g + 1) <= c.n) ++g;
        if (g * g != c.n) refuse("n", n, "is not a square: key_tokens=2 keys are every (K1, K2) of a g x g grid (n = g^2)");
        if (vocab_ / 3 - 1 < g)
            refuse("vocab", std::to_string(vocab_),
                   "has " + std::to_string(vocab_ / 3 - 1) + " first-part key symbols (1 .. V/3 - 1), fewer than sqrt(n)=" + std::to_string(g));
        if (values() < c.n)
            refuse("vocab", std::to_string(vocab_), "has " + std::to_string(values()) + " value symbols, fewer than n=" + n + " pairs");
        if (length_ % 2 != 0) refuse("length", std::to_string(length_), "must be even (as zoology's generator asks)");
        if (length_ < 6 * c.n)
            refuse("length", std::to_string(length_), "is too short for n=" + n + " triplets and their queries (needs length >= 6n)");
        if (queries_ && *queries_ > c.n)
            refuse("queries", std::to_string(*queries_), "asks more keys than the n=" + n + " written (queries <= n)");
        require_distinct_codes(c, "vocab=" + std::to_string(vocab_) + " symbol embeddings", vocab_, 0);
        return;
    }
    if (updates_ > c.n) refuse("updates", std::to_string(updates_), "updates more keys than the n=" + n + " written (updates <= n)");
    if (vocab_ / 2 - 1 < c.n)
        refuse("vocab", std::to_string(vocab_),
               "has " + std::to_string(vocab_ / 2 - 1) + " key symbols (1 .. V/2 - 1), fewer than n=" + n + " pairs (needs vocab >= 2n + 2)");
    if (length_ % 2 != 0) refuse("length", std::to_string(length_), "must be even (pairs and queries sit on even tokens)");
    if (length_ < 4 * c.n + 2 * updates_)
        refuse("length", std::to_string(length_),
               "is too short for n=" + n + " pairs" + (updates_ ? ", " + std::to_string(updates_) + " updates" : std::string()) +
                   " and their queries (needs length >= 4n" + (updates_ ? " + 2 updates" : "") + ")");
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

namespace {

/// n distinct gaps of 0 .. space − 1, drawn one after another with probability ∝ α (g + 1)^(α − 1)
/// among those not yet drawn (numpy's choice without replacement).
std::vector<std::int64_t> power_law_gaps(Rng& draw, std::int64_t n, std::int64_t space, double alpha) {
    std::vector<double> weight(static_cast<std::size_t>(space));
    for (std::int64_t g = 0; g < space; ++g) weight[std::size_t(g)] = alpha * std::pow(double(g + 1), alpha - 1.0);
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
    }
    return gap;
}

/// count distinct of first .. first + range − 1 (partial Fisher–Yates).
std::vector<std::int64_t> distinct_of(Rng& draw, std::int64_t first, std::int64_t range, std::int64_t count) {
    std::vector<std::int64_t> pool(static_cast<std::size_t>(range));
    std::iota(pool.begin(), pool.end(), first);
    for (std::int64_t i = 0; i < count; ++i) std::swap(pool[std::size_t(i)], pool[std::size_t(i + draw.below(range - i))]);
    pool.resize(static_cast<std::size_t>(count));
    return pool;
}

}  // namespace

void Mqar::fill_compositional(const TaskCell& c, Split split, std::int64_t index, Episode& e) const {
    const RowMat& emb = embedding(c);
    const std::int64_t n = c.n, third = vocab_ / 3, space = (length_ - 3 * n) / 3;
    std::int64_t g = 0;
    while ((g + 1) * (g + 1) <= n) ++g;
    Rng draw = Rng::stream("mqar/compositional", c.n, c.d, c.seed, vocab_, length_, format_real(alpha_), asked(c), static_cast<int>(split), index);
    const std::vector<std::int64_t> k1 = distinct_of(draw, 1, third - 1, g), k2 = distinct_of(draw, third, third, g);
    // the grid's n keys in a random order, each with its own value
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    for (std::int64_t i = n - 1; i > 0; --i) std::swap(order[std::size_t(i)], order[std::size_t(draw.below(i + 1))]);
    const std::vector<std::int64_t> vals = distinct_of(draw, first_value(), values(), n);
    std::vector<std::int64_t> first(static_cast<std::size_t>(n)), second(static_cast<std::size_t>(n));
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(length_), -1);
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t cellno = order[std::size_t(i)];
        first[std::size_t(i)] = k1[std::size_t(cellno / g)], second[std::size_t(i)] = k2[std::size_t(cellno % g)];
        tokens[std::size_t(3 * i)] = first[std::size_t(i)];
        tokens[std::size_t(3 * i + 1)] = second[std::size_t(i)];
        tokens[std::size_t(3 * i + 2)] = vals[std::size_t(i)];
    }
    const std::vector<std::int64_t> gap = power_law_gaps(draw, n, space, alpha_);
    for (std::int64_t i = 0; i < n; ++i) {
        tokens[std::size_t(3 * n + 3 * gap[std::size_t(i)])] = first[std::size_t(i)];
        tokens[std::size_t(3 * n + 3 * gap[std::size_t(i)] + 1)] = second[std::size_t(i)];
    }
    for (auto& x : tokens)
        if (x < 0) x = draw.below(vocab_);  // filler: any symbol
    std::vector<std::int64_t> ask(static_cast<std::size_t>(n));
    std::iota(ask.begin(), ask.end(), 0);
    const std::int64_t m = asked(c);
    if (m < n) {
        for (std::int64_t i = 0; i < m; ++i) std::swap(ask[std::size_t(i)], ask[std::size_t(i + draw.below(n - i))]);
        ask.resize(static_cast<std::size_t>(m));
    }
    // the two-token short convolution: query_t = unit(emb(x_{t−1}) + emb(x_t)) (token 0: emb(x_0));
    // the write of token t (row t − 1): key = query_{t−1}, value = emb(x_t)
    RowMat query(length_, c.d);
    query.row(0) = emb.row(tokens[0]);
    for (Eigen::Index t = 1; t < length_; ++t) {
        query.row(t) = emb.row(tokens[std::size_t(t - 1)]) + emb.row(tokens[std::size_t(t)]);
        const double norm = query.row(t).norm();
        if (norm > 0.0) query.row(t) /= static_cast<float>(norm);
    }
    const Eigen::Index w = length_ - 1;
    e.keys = query.topRows(w);
    e.queries = query.bottomRows(w);
    e.values.resize(w, c.d);
    for (Eigen::Index t = 1; t < length_; ++t) e.values.row(t - 1) = emb.row(tokens[std::size_t(t)]);
    e.candidates = emb.bottomRows(values());
    e.target.clear(), e.slot.clear(), e.read_at.clear();
    for (const std::int64_t j : ask) {
        e.read_at.push_back(static_cast<int>(3 * n + 3 * gap[std::size_t(j)]));  // the K2 token 3n + 3g + 1 is write 3n + 3g
        e.target.push_back(static_cast<int>(vals[std::size_t(j)] - first_value()));
        e.slot.push_back(-1);
    }
}

void Mqar::fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t, Episode& e) const {
    if (compose_) return fill_compositional(c, split, index, e);
    const RowMat& emb = embedding(c);
    const std::int64_t n = c.n, u = updates_, half = vocab_ / 2, context = 2 * (n + u), space = (length_ - context) / 2;
    Rng draw = u == 0 ? Rng::stream("mqar/stream", c.n, c.d, c.seed, vocab_, length_, format_real(alpha_), asked(c), static_cast<int>(split), index)
                      : Rng::stream("mqar/forgetting", c.n, c.d, c.seed, vocab_, length_, format_real(alpha_), asked(c), u,
                                    static_cast<int>(split), index);
    // n distinct keys of 1 .. V/2 − 1 and n distinct values of V/2 .. V − 1 (partial Fisher–Yates)
    const std::vector<std::int64_t> keys = distinct_of(draw, 1, half - 1, n);
    const std::vector<std::int64_t> vals = distinct_of(draw, half, vocab_ - half, n);
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(length_), -1);
    for (std::int64_t i = 0; i < n; ++i) tokens[std::size_t(2 * i)] = keys[std::size_t(i)], tokens[std::size_t(2 * i + 1)] = vals[std::size_t(i)];
    // values that change: u of the keys written again after the pairs, each with a value symbol other
    // than its first; a query's answer is the key's latest value
    std::vector<std::int64_t> latest = vals;
    if (u > 0) {
        const std::vector<std::int64_t> updated = distinct_of(draw, 0, n, u);
        for (std::int64_t j = 0; j < u; ++j) {
            const std::int64_t key = updated[std::size_t(j)];
            std::int64_t value = half + draw.below(vocab_ - half - 1);
            if (value >= vals[std::size_t(key)]) ++value;  // any value symbol but the key's first
            latest[std::size_t(key)] = value;
            tokens[std::size_t(2 * n + 2 * j)] = keys[std::size_t(key)], tokens[std::size_t(2 * n + 2 * j + 1)] = value;
        }
    }
    // the gaps: n distinct of 0 .. space − 1 (power_law_gaps); key i is asked at token context + 2 g_i
    const std::vector<std::int64_t> gap = power_law_gaps(draw, n, space, alpha_);
    for (std::int64_t i = 0; i < n; ++i) tokens[std::size_t(context + 2 * gap[std::size_t(i)])] = keys[std::size_t(i)];
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
        e.read_at.push_back(static_cast<int>(context + 2 * gap[std::size_t(j)] - 1));  // the write of token c + 2g is row c + 2g − 1
        e.target.push_back(static_cast<int>(latest[std::size_t(j)] - half));
        e.slot.push_back(-1);
    }
}

}  // namespace memcap
