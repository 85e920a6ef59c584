// memcap/tasks/sequence_recall.cpp — see sequence_recall.hpp.
#include "tasks/sequence_recall.hpp"

#include "core/rng.hpp"

#include <algorithm>

namespace memcap {

SequenceRecall::SequenceRecall(Spec spec, Mode mode)
    : Task(std::move(spec)), mode_(mode), vocab_(this->spec().integer("vocab")),
      lags_(mode == Mode::Lag ? this->spec().integer("lags") : 0), episodes_(this->spec().integer("episodes")) {}

Episode SequenceRecall::episode(const TaskCell& c, Split split, std::int64_t index) const {
    // Codes depend on (n, d, seed, vocab) only: the same for every episode of the seed.
    Rng codes = Rng::stream("sequence/codes", c.n, c.d, c.seed, vocab_);
    Episode e;
    e.candidates = codes.unit_rows<RowMat>(vocab_, c.d);
    e.keys = codes.unit_rows<RowMat>(c.n, c.d);  // position codes p_1..p_n

    Rng tokens = Rng::stream("sequence/tokens", c.n, c.d, c.seed, vocab_, static_cast<int>(split), index);
    std::vector<int> token(static_cast<std::size_t>(c.n));
    for (auto& t : token) t = static_cast<int>(tokens.below(vocab_));
    e.values.resize(c.n, c.d);
    for (std::int64_t t = 0; t < c.n; ++t) e.values.row(t) = e.candidates.row(token[static_cast<std::size_t>(t)]);

    const std::int64_t slots = mode_ == Mode::Lag ? std::min(lags_, c.n) : c.n;
    e.queries.resize(slots, c.d);
    for (std::int64_t s = 0; s < slots; ++s) {
        // lag k = s + 1 reads position n − k (0-based); copying reads position s.
        const std::int64_t pos = mode_ == Mode::Lag ? c.n - 1 - s : s;
        e.queries.row(s) = e.keys.row(pos);
        e.target.push_back(token[static_cast<std::size_t>(pos)]);
        e.slot.push_back(static_cast<int>(s + 1));
    }
    return e;
}

}  // namespace memcap
