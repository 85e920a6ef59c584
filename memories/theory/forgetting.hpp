// memcap/memories/theory/forgetting.hpp — recall of a recent pair in a long stream
// (recent_recall, tasks/stream_recall.hpp): a fixed state's horizon (docs/theory.md §7).
//
// A sliding window of R = ⌊B / (d_k + d_v)⌋ rows holds exactly the last R pairs: with a
// sharp softmax and no query noise it recalls every lag ≤ R and none beyond (horizon R).
//
// A decayed grid, S = Σ_j γ^(j−1) v_j φ_jᵀ over the T pairs written (lag j = 1 newest; γ = 1
// is the linear grid), read at a stored key's unit feature φ_ℓ: the target's score r·v_ℓ has
// mean γ^(ℓ−1)·c (c the query–key cosine, 1 without noise) and variance Σ_{j≠ℓ} w_j² / (d_φ d_v),
// w_j = γ^(j−1); candidate i's score has mean 0 and variance w_i²/d_φ + (γ^(ℓ−1) c)²/d_v +
// Σ_{j≠i,ℓ} w_j²/(d_φ d_v). Treating the scores as independent normals,
//     P(right at lag ℓ) = ∫ φ(h) Π_{i≠ℓ} Φ((γ^(ℓ−1) c + σ_t h) / σ_i) dh,
// an approximation (the exact sphere geometry of crosstalk.hpp is for γ = 1). The decay
// trades the newest pairs' crosstalk (less, as old pairs fade) against the signal at lag ℓ
// (γ^(ℓ−1)): the horizon is the largest ℓ with P ≥ 0.9, and for a window W the best γ
// maximises the mean of P over lags 1..W.
#pragma once

#include "memories/theory/recall_model.hpp"

#include <cstdint>
#include <vector>

namespace memcap::theory {

/// Rows of a sliding-window cache of `budget` floats: its exact horizon, noise-free.
std::int64_t window_horizon(std::int64_t budget, int d_key, int d_value);

/// The decayed grid's recall at lag `lag` of `writes` pairs (model above; cosine = 1: no noise).
/// lag in 1..writes, gamma in (0, 1], d_phi, d_value >= 1.
double decayed_grid_recall(std::int64_t lag, std::int64_t writes, double gamma, std::int64_t d_phi, int d_value,
                           double cosine = 1.0);

/// The mean of decayed_grid_recall over the lags lo+1 .. hi (a lag bucket), from at most
/// `points` lags spread evenly over it.
double decayed_grid_bucket(std::int64_t lo, std::int64_t hi, std::int64_t writes, double gamma, std::int64_t d_phi,
                           int d_value, double cosine = 1.0, int points = 8);

/// The horizon of the decayed grid: the largest lag ℓ ≤ writes with recall ≥ threshold at
/// every lag up to it (0 when lag 1 misses).
std::int64_t decayed_grid_horizon(std::int64_t writes, double gamma, std::int64_t d_phi, int d_value,
                                  double threshold = 0.9, double cosine = 1.0);

/// The task's side of one recent_recall row (a lag bucket), as a summary row gives it.
struct LagBucket {
    std::int64_t lo = 0, hi = 1;  // the bucket's lags lo+1 .. hi
    std::int64_t writes = 1;      // pairs written per episode (ratio · W)
    int d = 0;                    // code width
    double cosine = 1.0;          // the query–key cosine (1: no noise)
};

/// The sliding window of `rows` pairs on one bucket: the fraction of its lags within the window
/// (noise-free, sharp softmax); what a cache's entry declares (MemoryEntry::horizon_model).
RecallModel window_model(std::int64_t rows, const LagBucket& b);
/// The decayed grid's model on one bucket at decay `gamma` and feature width `d_phi` (the
/// effective width is min(d_phi, d): φ of d-wide keys spans at most d dimensions).
RecallModel decayed_grid_model(double gamma, std::int64_t d_phi, const LagBucket& b);

}  // namespace memcap::theory
