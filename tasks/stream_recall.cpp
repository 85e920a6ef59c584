// memcap/tasks/stream_recall.cpp — see stream_recall.hpp.
#include "tasks/stream_recall.hpp"

#include "core/rng.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memcap {

StreamTask::StreamTask(Spec spec)
    : Task(std::move(spec)), queries_(this->spec().integer("queries")), noise_(this->spec().real("noise")),
      cosine_(this->spec().real("cosine")) {}

double StreamTask::sigma(const TaskCell& c) const {
    return query_sigma(noise_, cosine_, c.d);
}

void StreamTask::check_noise(const TaskCell& c) const {
    refuse_two_noises(noise_, cosine_);
    if (writes_per_episode(c) > std::numeric_limits<int>::max())
        refuse("n", std::to_string(c.n), "makes " + std::to_string(writes_per_episode(c)) +
               " writes an episode, more than an int indexes (targets are ints)");
}

void StreamTask::make_queries(const TaskCell& c, const char* name, int split, std::int64_t index,
                              const std::vector<int>& key_rows, Episode& e) const {
    const auto m = static_cast<Eigen::Index>(key_rows.size());
    e.queries.resize(m, c.d);
    for (Eigen::Index i = 0; i < m; ++i) e.queries.row(i) = e.keys.row(key_rows[static_cast<std::size_t>(i)]);
    if (const double s = sigma(c); s > 0.0) {
        Rng noise = Rng::stream(name, c.n, c.d, c.seed, split, index);
        RowMat z(m, c.d);
        noise.fill_normal(z, s);
        e.queries += z;
    }
    normalise_rows(e.queries);
}

// ------------------------------------------------------------------ recent_recall

RecentRecall::RecentRecall(Spec spec)
    : StreamTask(std::move(spec)), ratio_(this->spec().integer("ratio")), buckets_(this->spec().integer("buckets")) {}

void RecentRecall::check_cell(const TaskCell& c) const {
    check_noise(c);
    require_distinct_codes(c, std::to_string(writes_per_episode(c)) + " candidate values (ratio=" + std::to_string(ratio_) +
                               " x n=" + std::to_string(c.n) + ")", writes_per_episode(c), 0);
}

std::int64_t RecentRecall::peak_bytes(const TaskCell& c) const {
    const double t = static_cast<double>(writes_per_episode(c)), d = c.d, m = static_cast<double>(queries_);
    // keys, values, candidates; queries and their noise; targets, slots, the rows asked
    return bytes_of(3.0 * t * d + 2.0 * m * d + scoring_panel_floats(t, d), 3.0 * m);  // and the scoring panel
}

void RecentRecall::fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t, Episode& e) const {
    const int sp = static_cast<int>(split);
    const std::int64_t t = writes_per_episode(c), b = buckets(c);
    Rng pairs = Rng::stream("recent_recall/pairs", t, c.d, c.seed, sp, index);
    e.keys.resize(t, c.d);
    e.values.resize(t, c.d);
    pairs.fill_normal(e.keys);
    pairs.fill_normal(e.values);
    normalise_rows(e.keys);
    normalise_rows(e.values);
    e.candidates = e.values;
    // query i: bucket i mod b, a lag uniform in it; slot = the bucket's largest lag
    Rng targets = Rng::stream("recent_recall/targets", c.n, c.d, c.seed, sp, index);
    e.target.resize(static_cast<std::size_t>(queries_));
    e.slot.resize(e.target.size());
    for (std::int64_t i = 0; i < queries_; ++i) {
        const std::int64_t k = i % b, lo = k * c.n / b, hi = (k + 1) * c.n / b;  // lags (lo, hi]
        const std::int64_t lag = lo + 1 + targets.below(hi - lo);
        e.target[static_cast<std::size_t>(i)] = static_cast<int>(t - lag);
        e.slot[static_cast<std::size_t>(i)] = static_cast<int>(hi);
    }
    make_queries(c, "recent_recall/noise", sp, index, e.target, e);
}

// ------------------------------------------------------------------ overwrite_recall

OverwriteRecall::OverwriteRecall(Spec spec)
    : StreamTask(std::move(spec)), rewrite_(this->spec().real("rewrite")), last_(this->spec().text("order") == "last"),
      rewritten_(this->spec().integer("rewritten")) {}

std::int64_t OverwriteRecall::rewrites(const TaskCell& c) const {
    return std::clamp<std::int64_t>(std::llround(rewrite_ * static_cast<double>(c.n)), 1, c.n);
}

std::int64_t OverwriteRecall::rewritten_read(const TaskCell& c) const {
    const std::int64_t r = rewrites(c);
    const std::int64_t asked = r < c.n ? queries_ / 2 : queries_;  // the odd queries, or all when every key is rewritten
    return last_ ? 0 : std::min(r, asked);
}

std::int64_t OverwriteRecall::test_episodes(const TaskCell& c) const {
    const std::int64_t per_episode = rewritten_read(c);
    return per_episode < 1 ? 1 : (rewritten_ + per_episode - 1) / per_episode;
}

void OverwriteRecall::check_cell(const TaskCell& c) const {
    check_noise(c);
    require_distinct_codes(c, std::to_string(writes_per_episode(c)) + " candidate values", writes_per_episode(c), 0);
}

std::int64_t OverwriteRecall::peak_bytes(const TaskCell& c) const {
    const double w = static_cast<double>(writes_per_episode(c)), d = c.d, m = static_cast<double>(queries_);
    // keys, values, candidates, and (interleaved) the keys and values in draw order; queries and
    // their noise; targets, slots, rows asked, the key order, the write order and its inverse
    return bytes_of((last_ ? 3.0 : 5.0) * w * d + 2.0 * m * d + scoring_panel_floats(w, d),  // and the scoring panel
                    3.0 * m + 2.0 * static_cast<double>(c.n) + (last_ ? 0.0 : 3.0 * w));
}

void OverwriteRecall::fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t, Episode& e) const {
    const int sp = static_cast<int>(split);
    const std::int64_t r = rewrites(c), w = c.n + r;
    // Drawn in the order "first writes 0..n−1, then the rewrites": into the episode itself for
    // order=last, else into the scratch rows, which the write order below then places.
    RowMat& keys = last_ ? e.keys : drawn_keys_;
    RowMat& values = last_ ? e.values : drawn_values_;
    Rng pairs = Rng::stream("overwrite_recall/pairs", c.n, c.d, c.seed, sp, index);
    keys.resize(w, c.d);
    values.resize(w, c.d);
    {
        auto originals = keys.topRows(c.n);
        pairs.fill_normal(originals);
    }
    pairs.fill_normal(values);
    // the rewritten keys: the first r of a partial Fisher–Yates shuffle of 0..n−1, in that order
    Rng pick = Rng::stream("overwrite_recall/rewrites", c.n, c.d, c.seed, sp, index);
    std::vector<int> order(static_cast<std::size_t>(c.n));
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    for (std::int64_t i = 0; i < r; ++i)
        std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(i + pick.below(c.n - i))]);
    // A rewrite's key is its first write's key, bit for bit: interleaved copies it once normalised
    // (a row's norm may round differently at another address); order=last as it always did.
    if (!last_) normalise_rows(keys.topRows(c.n));
    for (std::int64_t i = 0; i < r; ++i) keys.row(c.n + i) = keys.row(order[static_cast<std::size_t>(i)]);
    if (last_) normalise_rows(keys);
    normalise_rows(values);
    // row_of[j]: the write (row of the episode) that drawn pair j became; the identity for order=last
    std::vector<int> row_of(static_cast<std::size_t>(w));
    for (std::size_t j = 0; j < row_of.size(); ++j) row_of[j] = static_cast<int>(j);
    if (!last_) {
        // Interleaved: rewrite i (of key k = order[i], first written as write k of the first
        // writes) goes into gap g, uniform in k + 1 .. n: after first write g − 1 and before
        // first write g (after the last one when g = n). Rewrites sharing a gap keep their
        // (random) order i.
        Rng gaps = Rng::stream("overwrite_recall/positions", c.n, c.d, c.seed, sp, index);
        std::vector<std::int64_t> gap(static_cast<std::size_t>(r)), in_gap(static_cast<std::size_t>(c.n + 1), 0);
        for (std::int64_t i = 0; i < r; ++i) {
            const std::int64_t k = order[static_cast<std::size_t>(i)];
            gap[static_cast<std::size_t>(i)] = k + 1 + gaps.below(c.n - k);
            ++in_gap[static_cast<std::size_t>(gap[static_cast<std::size_t>(i)])];
        }
        // start[g]: the first row of gap g's rewrites, which come just before first write g
        std::vector<std::int64_t> start(static_cast<std::size_t>(c.n + 1));
        std::int64_t before = 0;  // rewrites in gaps before g
        for (std::int64_t g = 0; g <= c.n; ++g) {
            start[static_cast<std::size_t>(g)] = g + before;
            before += in_gap[static_cast<std::size_t>(g)];
        }
        for (std::int64_t t = 0; t < c.n; ++t)  // after gap t's rewrites
            row_of[static_cast<std::size_t>(t)] = static_cast<int>(start[static_cast<std::size_t>(t)] + in_gap[static_cast<std::size_t>(t)]);
        for (std::int64_t i = 0; i < r; ++i)
            row_of[static_cast<std::size_t>(c.n + i)] = static_cast<int>(start[static_cast<std::size_t>(gap[static_cast<std::size_t>(i)])]++);
        e.keys.resize(w, c.d);
        e.values.resize(w, c.d);
        for (std::int64_t j = 0; j < w; ++j) {
            e.keys.row(row_of[static_cast<std::size_t>(j)]) = keys.row(j);
            e.values.row(row_of[static_cast<std::size_t>(j)]) = values.row(j);
        }
    }
    e.candidates = e.values;
    e.tie_tolerance = 0.01f;
    // query i: an untouched key (slot 0) when i is even and one is left, else a rewritten key
    // (slot 1) read at its latest value. order=last draws both with replacement; interleaved
    // draws the untouched ones so and reads the rewritten ones in turn (rewrite i by the i-th
    // such query, cyclically): every rewritten key is read while r ≤ the rewritten queries.
    Rng targets = Rng::stream("overwrite_recall/targets", c.n, c.d, c.seed, sp, index);
    std::vector<int> asked(static_cast<std::size_t>(queries_));
    e.target.resize(asked.size());
    e.slot.resize(asked.size());
    std::int64_t turn = 0;  // rewritten queries so far (interleaved)
    for (std::int64_t i = 0; i < queries_; ++i) {
        const auto q = static_cast<std::size_t>(i);
        if (i % 2 == 0 && r < c.n) {
            const int key = order[static_cast<std::size_t>(r + targets.below(c.n - r))];
            asked[q] = row_of[static_cast<std::size_t>(key)], e.target[q] = asked[q], e.slot[q] = 0;
        } else {
            const std::int64_t j = last_ ? targets.below(r) : turn++ % r;
            asked[q] = row_of[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])];  // its first write's key
            e.target[q] = row_of[static_cast<std::size_t>(c.n + j)], e.slot[q] = 1;
        }
    }
    make_queries(c, "overwrite_recall/noise", sp, index, asked, e);
}

// ------------------------------------------------------------------ salient_recall

SalientRecall::SalientRecall(Spec spec)
    : StreamTask(std::move(spec)), distractors_(this->spec().integer("distractors")),
      gate_all_(this->spec().has("gate") && this->spec().text("gate") == "all") {}

void SalientRecall::check_cell(const TaskCell& c) const {
    check_noise(c);
    if (c.d < 2) refuse("d", std::to_string(c.d), "leaves no coordinate for content: coordinate 0 marks a distractor (needs d >= 2)");
    require_distinct_codes(c, "n=" + std::to_string(c.n) + " marked values", c.n, 1);
    if (gate_all_ && c.n * (1 + distractors_) > std::numeric_limits<int>::max())
        refuse("n", std::to_string(c.n), "makes " + std::to_string(c.n * (1 + distractors_)) +
               " pairs in the stream before the gate, more than an int indexes");
}

std::int64_t SalientRecall::peak_bytes(const TaskCell& c) const {
    const double w = static_cast<double>(c.n * (1 + distractors_)), d = c.d, m = static_cast<double>(queries_);
    // keys, values (and their draw on d − 1 coordinates), the marked values as candidates
    // (gate=all: and the marked keys); queries and their noise; targets, slots, rows asked,
    // the marked rows
    return bytes_of(3.0 * w * d + (gate_all_ ? 2.0 : 1.0) * double(c.n) * d + 2.0 * m * d +
                        scoring_panel_floats(double(c.n), c.d),  // and the scoring panel
                    3.0 * m + double(c.n));
}

void SalientRecall::fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t, Episode& e) const {
    const int sp = static_cast<int>(split);
    const std::int64_t w = c.n * (1 + distractors_);  // the stream, before any gate
    Rng pairs = Rng::stream("salient_recall/pairs", c.n, distractors_, c.d, c.seed, sp, index);
    e.keys.resize(w, c.d);
    pairs.fill_normal(e.keys);
    normalise_rows(e.keys);
    RowMat content = pairs.unit_rows<RowMat>(w, c.d - 1);  // coordinates 1..d−1 of every value
    e.values = RowMat::Zero(w, c.d);
    e.values.rightCols(c.d - 1) = content;
    // the marked positions: a uniform n-subset of 0..w−1 (selection sampling, in order)
    Rng where = Rng::stream("salient_recall/positions", c.n, distractors_, c.d, c.seed, sp, index);
    std::vector<int> marked;
    marked.reserve(static_cast<std::size_t>(c.n));
    for (std::int64_t t = 0; t < w; ++t) {
        const auto placed = static_cast<std::int64_t>(marked.size());
        if (where.uniform() * static_cast<double>(w - t) < static_cast<double>(c.n - placed))
            marked.push_back(static_cast<int>(t));
        else
            e.values(t, 0) = 1.0f;  // a distractor: e₀ + u
    }
    e.candidates.resize(c.n, c.d);
    for (std::int64_t i = 0; i < c.n; ++i) e.candidates.row(i) = e.values.row(marked[static_cast<std::size_t>(i)]);
    Rng targets = Rng::stream("salient_recall/targets", c.n, c.d, c.seed, sp, index);
    e.target.resize(static_cast<std::size_t>(queries_));
    targets.below(c.n, e.target.data(), e.target.size());
    e.slot.assign(e.target.size(), -1);
    std::vector<int> asked(e.target.size());
    for (std::size_t q = 0; q < asked.size(); ++q) asked[q] = marked[static_cast<std::size_t>(e.target[q])];
    make_queries(c, "salient_recall/noise", sp, index, asked, e);
    if (gate_all_) {  // the oracle gate: only the marked pairs reach the memory, in stream order
        RowMat keys(c.n, c.d);
        for (std::int64_t i = 0; i < c.n; ++i) keys.row(i) = e.keys.row(marked[static_cast<std::size_t>(i)]);
        e.keys.swap(keys);
        e.values = e.candidates;
    }
}

}  // namespace memcap
