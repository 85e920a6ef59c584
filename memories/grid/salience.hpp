// memcap/memories/grid/salience.hpp — the step Δ a gated memory takes from a task's
// declared salience feature (core/inputs.hpp), computed without training.
//
// Δ(v) = 0 when v_f ≠ 0 or v = 0, else 1; f is the value coordinate the task declares as
// its salience feature. A token the task marks as filler or distractor carries the mark
// on f (selective copying's blank is e_f), so Δ = 0 and the write is skipped; a content token has v_f = 0 exactly, so Δ = 1 — the
// gate a trained model saturates to when one input feature tells it what will be asked.
// Without a declared feature (random values: nothing tells filler from content) Δ = 1 for
// every write — as on salient_recall, which gates in the task instead, for every memory
// or for none (tasks/stream_recall.hpp: gate=all|none). Used by every gated grid (selective, mamba2, gated_deltanet, kda, rwkv7,
// gla with gate=salience) and mesanet: an input-dependent gate of an untrained model has
// nothing else to depend on, and memcap never derives one from random projections of
// random inputs.
#pragma once

#include "core/types.hpp"

#include <cmath>
#include <optional>

namespace memcap {

inline float salience_step(const float* value, int d_value, const std::optional<int>& feature) {
    if (!feature) return 1.0f;
    if (value[*feature] != 0.0f) return 0.0f;  // marked: filler or distractor
    for (int i = 0; i < d_value; ++i)
        if (value[i] != 0.0f) return 1.0f;
    return 0.0f;  // v = 0 writes nothing
}

/// The weights of a batch of writes into a sum decayed by rho per full step, X ← rho^Δ X + Δ x:
/// w_i = Δ_i Π_{j>i} rho^Δ_j (the batch unrolled), and in `decay` the factor Π_i rho^Δ_i on
/// what was there before. Δ is the salience step when `gated`, else 1. Used by `selective`
/// (one matrix) and `mesanet` (both of its sums).
inline Vec unrolled_weights(ConstMatRef values, double rho, bool gated, const std::optional<int>& feature,
                            double& decay) {
    const Eigen::Index n = values.rows();
    Vec w(n);
    double suffix = 1.0;  // Π_{j>i} rho^Δ_j, accumulated from the end
    for (Eigen::Index i = n - 1; i >= 0; --i) {
        const float delta = gated ? salience_step(values.row(i).data(), static_cast<int>(values.cols()), feature) : 1.0f;
        w(i) = static_cast<float>(delta * suffix);
        suffix *= std::pow(rho, static_cast<double>(delta));
    }
    decay = suffix;
    return w;
}

}  // namespace memcap
