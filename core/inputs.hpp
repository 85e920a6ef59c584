// memcap/core/inputs.hpp — the input description: what a task feeds a memory.
//
// Tasks (tasks/) and memories (memories/) are siblings: neither includes the
// other. A task declares, per cell, what its written pairs and queries look
// like (Task::inputs); the harness passes that description, together with the
// budget, to the memory factory (MemoryShape in memories/memory.hpp is inputs +
// budget). A memory may act on a declared property, never on a task's name.
//
//   field              assoc_recall,    lag_recall, copying   selective_copying   salient_recall
//                      recent_recall,
//                      overwrite_recall
//   d_key, d_value     d, d             d, d                  d, d                d, d
//   positional_keys    false            true                  true                false
//   salience_feature   none             none                  0 (blank: e₀)       none (the task gates)
#pragma once

#include <optional>

namespace memcap {

struct InputDescription {
    /// Dimension of keys and queries.
    int d_key = 64;
    /// Dimension of values, reads and candidates.
    int d_value = 64;
    /// True when the keys only mark positions (position or ordinal codes, the same in
    /// every episode) and carry no content: a memory without content-addressed reads
    /// (the rotation RNN) then takes the value alone as its input, as in essay 004
    /// Part 1; otherwise the pair [k; v].
    bool positional_keys = false;
    /// The coordinate of the value that marks a token's class, when the task has one:
    /// filler (noise) or distractor tokens are nonzero on it and content tokens are exactly
    /// 0 there (selective copying: the blank is e₀). A selective memory may gate its writes
    /// on it. Empty: the values carry no such feature (random values), and nothing tells
    /// filler from content; salient_recall marks its distractors (e₀ + u) but declares none:
    /// its gate is the task's, applied to every memory or to none (gate=all|none).
    std::optional<int> salience_feature;
};

}  // namespace memcap
