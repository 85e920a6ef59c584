// memcap/tasks/assoc_recall.cpp — see assoc_recall.hpp.
#include "tasks/assoc_recall.hpp"

#include "core/rng.hpp"

#include <algorithm>
#include <cmath>

namespace memcap {

AssocRecall::AssocRecall(Spec spec)
    : Task(std::move(spec)), queries_(this->spec().integer("queries")), noise_(this->spec().real("noise")),
      cosine_(this->spec().real("cosine")), control_(this->spec().text("control")),
      absent_(this->spec().has("absent") ? this->spec().real("absent") : 0.0) {}

std::int64_t AssocRecall::absent_count() const { return std::llround(absent_ * static_cast<double>(queries_)); }

double AssocRecall::sigma(const TaskCell& c) const {
    if (cosine_ < 1.0) return std::sqrt((1.0 / (cosine_ * cosine_) - 1.0) / static_cast<double>(c.d));
    return noise_;
}

void AssocRecall::check_cell(const TaskCell& c) const {
    if (noise_ > 0.0 && cosine_ < 1.0)
        refuse("noise", format_real(noise_), "and cosine=" + format_real(cosine_) +
               " both set the query noise; give one (noise: sigma per entry; cosine: the same query-key cosine at every d)");
    if (absent_ > 0.0) {
        if (control_ != "none" && control_ != "paired_permutation")
            refuse("absent", format_real(absent_), "cannot be combined with control=" + control_ +
                   " (its queries or targets are not those of stored keys); use control=none or paired_permutation");
        if (absent_count() < 1 || absent_count() > queries_ - 1)
            refuse("absent", format_real(absent_), "gives " + std::to_string(absent_count()) + " absent of queries=" +
                   std::to_string(queries_) + "; it must leave at least one absent and one present query");
    }
    require_distinct_codes(c, "n=" + std::to_string(c.n) + " candidate values", c.n, 0);
}

std::int64_t AssocRecall::peak_bytes(const TaskCell& c) const {
    const double nd = double(c.n) * c.d, qd = double(queries_) * c.d;
    double floats = 3.0 * nd + qd;  // keys, values, candidates; queries
    double ints = 3.0 * double(queries_);  // targets, slots, hidden pairs
    if (control_ == "key_shuffle" || control_ == "value_shuffle" || control_ == "paired_permutation")
        floats += 2.0 * nd, ints += 2.0 * double(c.n);  // copies of the keys and values; the order (64-bit)
    if (sigma(c) > 0.0) floats += qd;  // the noise
    if (absent_ > 0.0) floats += qd, ints += double(queries_);  // the fresh codes; their places
    return bytes_of(floats, ints);
}

void AssocRecall::fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t, Episode& e) const {
    const int sp = static_cast<int>(split);
    Rng pairs = Rng::stream("assoc_recall/pairs", c.n, c.d, c.seed, sp, index);
    e.keys.resize(c.n, c.d);
    e.values.resize(c.n, c.d);
    pairs.fill_normal(e.keys);
    pairs.fill_normal(e.values);
    normalise_rows(e.keys);
    normalise_rows(e.values);
    if (control_ == "key_collision")
        for (std::int64_t i = 1; i < c.n; i += 2) e.keys.row(i) = e.keys.row(i - 1);
    e.candidates = e.values;

    Rng targets = Rng::stream("assoc_recall/targets", c.n, c.d, c.seed, sp, index);
    e.target.resize(static_cast<std::size_t>(queries_));
    targets.below(c.n, e.target.data(), e.target.size());
    if (control_ == "key_collision")  // the later-written value of the two under one key
        for (auto& t : e.target) t = static_cast<int>(std::min<std::int64_t>(t | 1, c.n - 1));
    e.slot.assign(e.target.size(), -1);
    if (control_ == "structural_mask") e.hidden = e.target;  // the asked-for pair, in write order

    e.queries.resize(queries_, c.d);
    if (control_ == "shuffled_query") {
        Rng random = Rng::stream("assoc_recall/random_query", c.n, c.d, c.seed, sp, index);
        random.fill_normal(e.queries);
    } else {
        for (std::int64_t i = 0; i < queries_; ++i) e.queries.row(i) = e.keys.row(e.target[i]);
        if (const double s = sigma(c); s > 0.0) {
            Rng noise = Rng::stream("assoc_recall/noise", c.n, c.d, c.seed, sp, index);
            RowMat z(queries_, c.d);
            noise.fill_normal(z, s);
            e.queries += z;
        }
    }
    if (absent_ > 0.0) {  // round(absent · queries) queries at random places ask for fresh codes
        Rng fresh = Rng::stream("assoc_recall/absent", c.n, c.d, c.seed, sp, index);
        std::vector<int> place(static_cast<std::size_t>(queries_));
        for (std::size_t i = 0; i < place.size(); ++i) place[i] = static_cast<int>(i);
        const auto k = static_cast<std::size_t>(absent_count());
        for (std::size_t i = 0; i < k; ++i)  // a partial Fisher–Yates: place[0 .. k) are the absent queries
            std::swap(place[i], place[i + static_cast<std::size_t>(fresh.below(static_cast<std::int64_t>(place.size() - i)))]);
        RowMat codes(static_cast<Eigen::Index>(k), c.d);
        fresh.fill_normal(codes);
        for (std::size_t i = 0; i < k; ++i) {
            e.queries.row(place[i]) = codes.row(static_cast<Eigen::Index>(i));
            e.target[static_cast<std::size_t>(place[i])] = -1;
        }
    }
    normalise_rows(e.queries);

    // Interventions on what is written; queries, targets and candidates stay as they are.
    if (control_ == "key_shuffle" || control_ == "value_shuffle" || control_ == "paired_permutation") {
        Rng perm = Rng::stream("assoc_recall/permutation", c.n, c.d, c.seed, sp, index);
        std::vector<Eigen::Index> order(static_cast<std::size_t>(c.n));
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<Eigen::Index>(i);
        for (std::size_t i = order.size(); i > 1; --i)  // Fisher–Yates
            std::swap(order[i - 1], order[static_cast<std::size_t>(perm.below(static_cast<std::int64_t>(i)))]);
        RowMat k = e.keys, v = e.values;
        for (std::int64_t i = 0; i < c.n; ++i) {
            const Eigen::Index j = order[static_cast<std::size_t>(i)];
            if (control_ != "value_shuffle") e.keys.row(i) = k.row(j);
            if (control_ != "key_shuffle") e.values.row(i) = v.row(j);
        }
    }
}

}  // namespace memcap
