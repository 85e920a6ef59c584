// memcap/tasks/selective_copying.cpp — see selective_copying.hpp.
#include "tasks/selective_copying.hpp"

#include "core/error.hpp"
#include "core/rng.hpp"

namespace memcap {

SelectiveCopying::SelectiveCopying(Spec spec)
    : Task(std::move(spec)), vocab_(this->spec().integer("vocab")), content_(this->spec().integer("content")),
      episodes_(this->spec().integer("episodes")) {}

Episode SelectiveCopying::episode(const TaskCell& c, Split split, std::int64_t index) const {
    if (content_ > c.n)
        throw UsageError("task '" + spec().canonical() + "': content=" + std::to_string(content_) +
                         " tokens do not fit in a stream of n=" + std::to_string(c.n));
    if (c.d < 2) throw UsageError("task 'selective_copying' needs d >= 2 (coordinate 0 marks the blank)");
    Rng codes = Rng::stream("selective_copying/codes", c.d, c.seed, vocab_, content_);
    Episode e;
    e.candidates.resize(vocab_ + 1, c.d);
    e.candidates.setZero();
    e.candidates.topRightCorner(vocab_, c.d - 1) = codes.unit_rows<RowMat>(vocab_, c.d - 1);
    e.candidates(vocab_, 0) = 1.0f;  // the blank, e₀
    const RowMat ordinal = codes.unit_rows<RowMat>(content_ + 1, c.d);  // o_0..o_M

    // Content positions: a uniform M-subset of 0..n−1 (selection sampling, in order).
    Rng draw = Rng::stream("selective_copying/tokens", c.n, c.d, c.seed, vocab_, content_, static_cast<int>(split), index);
    e.keys.resize(c.n, c.d);
    e.values.resize(c.n, c.d);
    std::int64_t placed = 0;
    for (std::int64_t t = 0; t < c.n; ++t) {
        const bool is_content = draw.uniform() * static_cast<double>(c.n - t) < static_cast<double>(content_ - placed);
        if (is_content) {
            const int token = static_cast<int>(draw.below(vocab_));
            e.values.row(t) = e.candidates.row(token);
            ++placed;
            e.target.push_back(token);
            e.slot.push_back(static_cast<int>(placed));
        } else {
            e.values.row(t) = e.candidates.row(vocab_);
        }
        e.keys.row(t) = ordinal.row(placed);
    }
    e.queries = ordinal.bottomRows(content_);
    return e;
}

}  // namespace memcap
