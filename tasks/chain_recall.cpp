// memcap/tasks/chain_recall.cpp — see chain_recall.hpp.
#include "tasks/chain_recall.hpp"

#include "core/rng.hpp"

#include <utility>

namespace memcap {

ChainRecall::ChainRecall(Spec spec)
    : Task(std::move(spec)), hops_(static_cast<int>(this->spec().integer("hops"))),
      cleanup_(this->spec().text("cleanup") == "nearest"), queries_(this->spec().integer("queries")) {}

void ChainRecall::check_cell(const TaskCell& c) const {
    if (hops_ > c.n - 1)
        refuse("hops", std::to_string(hops_), "is too large for n=" + std::to_string(c.n) + ": a chain of h hops visits h + 1 " +
               "distinct items, so hops <= n - 1 = " + std::to_string(c.n - 1));
    require_distinct_codes(c, "n=" + std::to_string(c.n) + " items", c.n, 0);
}

std::int64_t ChainRecall::peak_bytes(const TaskCell& c) const {
    const double nd = double(c.n) * c.d, qd = double(queries_) * c.d;
    // keys, values, candidates; the first queries, one round's reads and next queries; targets and slots
    // and the candidates as the readout scores them
    return bytes_of(3.0 * nd + 3.0 * qd + scoring_panel_floats(double(c.n), c.d), 2.0 * double(queries_) * hops_ + 2.0 * double(c.n));
}

void ChainRecall::fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t, Episode& e) const {
    const int sp = static_cast<int>(split);
    Rng items = Rng::stream("chain_recall/items", c.n, c.d, c.seed, sp, index);
    e.candidates.resize(c.n, c.d);
    items.fill_normal(e.candidates);
    normalise_rows(e.candidates);

    // π: one cycle through every item (Sattolo's algorithm).
    Rng perm = Rng::stream("chain_recall/permutation", c.n, c.d, c.seed, sp, index);
    std::vector<int> next(static_cast<std::size_t>(c.n));
    for (std::size_t i = 0; i < next.size(); ++i) next[i] = static_cast<int>(i);
    for (std::size_t i = next.size(); i > 1; --i)
        std::swap(next[i - 1], next[static_cast<std::size_t>(perm.below(static_cast<std::int64_t>(i - 1)))]);
    e.keys = e.candidates;
    e.values.resize(c.n, c.d);
    for (std::int64_t i = 0; i < c.n; ++i) e.values.row(i) = e.candidates.row(next[static_cast<std::size_t>(i)]);

    Rng starts = Rng::stream("chain_recall/starts", c.n, c.d, c.seed, sp, index);
    std::vector<int> at(static_cast<std::size_t>(queries_));
    starts.below(c.n, at.data(), at.size());
    e.queries.resize(queries_, c.d);
    for (std::int64_t i = 0; i < queries_; ++i) e.queries.row(i) = e.candidates.row(at[static_cast<std::size_t>(i)]);

    // Round r's targets (slot r + 1) in rows r·m … r·m + m − 1.
    const std::size_t m = at.size();
    e.target.resize(m * static_cast<std::size_t>(hops_));
    e.slot.resize(e.target.size());
    for (int r = 0; r < hops_; ++r)
        for (std::size_t i = 0; i < m; ++i) {
            at[i] = next[static_cast<std::size_t>(at[i])];
            e.target[static_cast<std::size_t>(r) * m + i] = at[i];
            e.slot[static_cast<std::size_t>(r) * m + i] = r + 1;
        }
}

void ChainRecall::next_queries(const Episode& e, ConstMatRef reads, RowMat& queries) const {
    queries.resize(reads.rows(), e.keys.cols());
    if (!cleanup_) {
        queries = reads;
        normalise_rows(queries);  // a zero read stays zero: it attends to nothing in particular
        return;
    }
    // The nearest item (Euclidean, ties to the lower index), as the scoring's nearest candidate.
    const RowMat dots = reads * e.candidates.transpose();
    const Vec sq = e.candidates.rowwise().squaredNorm();
    for (Eigen::Index i = 0; i < reads.rows(); ++i) {
        Eigen::Index best = 0;
        float best_score = sq(0) - 2.0f * dots(i, 0);
        for (Eigen::Index j = 1; j < dots.cols(); ++j)
            if (const float s = sq(j) - 2.0f * dots(i, j); s < best_score) best_score = s, best = j;
        queries.row(i) = e.candidates.row(best);
    }
}

}  // namespace memcap
