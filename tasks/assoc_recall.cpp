// memcap/tasks/assoc_recall.cpp — see assoc_recall.hpp.
#include "tasks/assoc_recall.hpp"

#include "core/rng.hpp"

namespace memcap {

AssocRecall::AssocRecall(Spec spec)
    : Task(std::move(spec)), queries_(this->spec().integer("queries")), noise_(this->spec().real("noise")),
      shuffled_query_(this->spec().text("control") == "shuffled_query") {}

Episode AssocRecall::episode(const TaskCell& c, Split split, std::int64_t index) const {
    const int sp = static_cast<int>(split);
    Episode e;
    Rng pairs = Rng::stream("assoc_recall/pairs", c.n, c.d, c.seed, sp, index);
    e.keys.resize(c.n, c.d);
    e.values.resize(c.n, c.d);
    pairs.fill_normal(e.keys);
    pairs.fill_normal(e.values);
    normalise_rows(e.keys);
    normalise_rows(e.values);
    e.candidates = e.values;

    Rng targets = Rng::stream("assoc_recall/targets", c.n, c.d, c.seed, sp, index);
    e.target.resize(static_cast<std::size_t>(queries_));
    for (auto& t : e.target) t = static_cast<int>(targets.below(c.n));
    e.slot.assign(e.target.size(), -1);

    e.queries.resize(queries_, c.d);
    if (shuffled_query_) {
        Rng random = Rng::stream("assoc_recall/random_query", c.n, c.d, c.seed, sp, index);
        random.fill_normal(e.queries);
    } else {
        for (std::int64_t i = 0; i < queries_; ++i) e.queries.row(i) = e.keys.row(e.target[i]);
        if (noise_ > 0.0) {
            Rng noise = Rng::stream("assoc_recall/noise", c.n, c.d, c.seed, sp, index);
            RowMat z(queries_, c.d);
            noise.fill_normal(z, noise_);
            e.queries += z;
        }
    }
    normalise_rows(e.queries);
    return e;
}

}  // namespace memcap
