// memcap/tasks/selective_copying.cpp — see selective_copying.hpp.
#include "tasks/selective_copying.hpp"

#include "core/rng.hpp"

namespace memcap {

SelectiveCopying::SelectiveCopying(Spec spec)
    : Task(std::move(spec)), vocab_(this->spec().integer("vocab")), content_(this->spec().integer("content")),
      episodes_(this->spec().integer("episodes")) {}

const SelectiveCopying::Codes& SelectiveCopying::codes(const TaskCell& c) const {
    // Drawn once per cell: they depend on (d, seed, vocab, content) only.
    if (codes_.cell.n != c.n || codes_.cell.d != c.d || codes_.cell.seed != c.seed) {
        Rng rng = Rng::stream("selective_copying/codes", c.d, c.seed, vocab_, content_);
        codes_.answers = RowMat::Zero(vocab_ + 1, c.d);
        codes_.answers.topRightCorner(vocab_, c.d - 1) = rng.unit_rows<RowMat>(vocab_, c.d - 1);
        codes_.answers(vocab_, 0) = 1.0f;  // the blank, e₀
        codes_.ordinal = rng.unit_rows<RowMat>(content_ + 1, c.d);  // o_0..o_M
        codes_.cell = c;
    }
    return codes_;
}

void SelectiveCopying::check_cell(const TaskCell& c) const {
    if (content_ > c.n)
        refuse("content", std::to_string(content_), "tokens do not fit in a stream of n=" + std::to_string(c.n) +
                                                        " (content <= n)");
    if (c.d < 2) refuse("d", std::to_string(c.d), "leaves no coordinate for content: coordinate 0 marks the blank (needs d >= 2)");
    require_distinct_codes(c, "vocab=" + std::to_string(vocab_) + " content codes", vocab_, 1);
}

std::int64_t SelectiveCopying::peak_bytes(const TaskCell& c) const {
    const double n = double(c.n), d = c.d, answers = double(vocab_ + 1), m = double(content_);
    // codes (answers, ordinals, and the draw of the content codes); the episode's keys,
    // values, candidates, queries; the targets and slots
    // and the candidates as the readout scores them
    return bytes_of(answers * d + (m + 1.0) * d + answers * d + 2.0 * n * d + answers * d + m * d +
                        scoring_panel_floats(answers, d),
                    2.0 * m);
}

void SelectiveCopying::fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t, Episode& e) const {
    const Codes& fixed = codes(c);
    e.candidates = fixed.answers;
    e.target.clear();
    e.slot.clear();
    const RowMat& ordinal = fixed.ordinal;

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
}

}  // namespace memcap
