// memcap/tasks/sequence_recall.cpp — see sequence_recall.hpp.
#include "tasks/sequence_recall.hpp"

#include "core/rng.hpp"

#include <algorithm>
#include <cstring>

namespace memcap {

SequenceRecall::SequenceRecall(Spec spec, Mode mode)
    : Task(std::move(spec)), mode_(mode), vocab_(this->spec().integer("vocab")),
      lags_(mode == Mode::Lag ? this->spec().integer("lags") : 0), episodes_(this->spec().integer("episodes")) {}

void SequenceRecall::check_cell(const TaskCell& c) const {
    require_distinct_codes(c, "vocab=" + std::to_string(vocab_) + " token codes", vocab_, 0);
}

std::int64_t SequenceRecall::peak_bytes(const TaskCell& c) const {
    const double n = double(c.n), d = c.d, v = double(vocab_);
    const double slots = mode_ == Mode::Lag ? double(std::min(lags_, c.n)) : n;
    // codes (vocabulary, positions); the episode's keys, values, candidates, queries;
    // the tokens, targets and slots
    // and the candidates as the readout scores them
    return bytes_of(v * d + n * d + 2.0 * n * d + v * d + slots * d + scoring_panel_floats(v, d), n + 2.0 * slots);
}

const SequenceRecall::Codes& SequenceRecall::codes(const TaskCell& c) const {
    // Codes depend on (n, d, seed, vocab) only: the same for every episode of the seed,
    // so they are drawn once per cell (a Task belongs to one cell and one thread).
    if (codes_.cell.n != c.n || codes_.cell.d != c.d || codes_.cell.seed != c.seed) {
        Rng rng = Rng::stream("sequence/codes", c.n, c.d, c.seed, vocab_);
        codes_.vocabulary = rng.unit_rows<RowMat>(vocab_, c.d);
        codes_.positions = rng.unit_rows<RowMat>(c.n, c.d);  // position codes p_1..p_n
        codes_.cell = c;
        codes_.tag = new_fixed_parts_tag();
    }
    return codes_;
}

void SequenceRecall::fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t held, Episode& e) const {
    const Codes& fixed = codes(c);
    const std::int64_t slots = mode_ == Mode::Lag ? std::min(lags_, c.n) : c.n;
    // lag k = s + 1 reads position n − k (0-based); copying reads position s.
    const auto position = [&](std::int64_t s) { return mode_ == Mode::Lag ? c.n - 1 - s : s; };
    if (held != fixed.tag) {  // keys, queries, candidates, slots: the same in every episode of the cell
        e.candidates = fixed.vocabulary;
        e.keys = fixed.positions;
        e.queries.resize(slots, c.d);
        e.slot.clear();
        for (std::int64_t s = 0; s < slots; ++s) {
            e.queries.row(s) = e.keys.row(position(s));
            e.slot.push_back(static_cast<int>(s + 1));
        }
    }
    e.fixed_parts = fixed.tag;

    Rng tokens = Rng::stream("sequence/tokens", c.n, c.d, c.seed, vocab_, static_cast<int>(split), index);
    token_.resize(static_cast<std::size_t>(c.n));
    tokens.below(vocab_, token_.data(), token_.size());
    e.values.resize(c.n, c.d);
    const auto row_bytes = static_cast<std::size_t>(c.d) * sizeof(float);  // rows of a RowMat are contiguous
    for (std::int64_t t = 0; t < c.n; ++t)
        std::memcpy(e.values.row(t).data(), e.candidates.row(token_[static_cast<std::size_t>(t)]).data(), row_bytes);
    e.target.resize(static_cast<std::size_t>(slots));
    for (std::int64_t s = 0; s < slots; ++s) e.target[static_cast<std::size_t>(s)] = token_[static_cast<std::size_t>(position(s))];
}

}  // namespace memcap
