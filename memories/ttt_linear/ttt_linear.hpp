// memcap/memories/ttt_linear/ttt_linear.hpp — TTT-Linear: a linear map trained at test time.
//
// Stores:       one matrix W of d_v × d_φ floats, the weights of the inner model f(x) = W φ(x)
//               (W = 0 after reset; TTT's learned initial W₀ is 0 for an untrained model).
// Write:        mini-batch gradient descent on ℓ(W; k, v) = ‖W φ(k) − v‖², φ normalised to
//               unit length: the pairs go in mini-batches of b in write order, and each
//               batch's gradients are taken at the weights it starts from,
//                   W ← W − η Σ_{t ∈ batch} ∇ℓ(W_start; k_t, v_t) = W + 2η Σ_t (v_t − W_start φ_t) φ_tᵀ,
//               `steps` times per batch (each step at the weights the last one left).
//               With b = 1 and one step this is the delta rule at β = 2η exactly (its
//               write M += β (v − M φ) φᵀ): tests/test_deep_memories.cpp checks it to
//               rounding. With b = n (one batch from W = 0) it is the linear grid scaled by 2η.
//               φ = proj, the grids' fixed projection to d_φ (the identity at d_φ = d_k).
// Read:         W φ(q), φ(q) normalised: the inner model's output (TTT's z = f(θ_Q x; W)).
// state_floats: d_v × d_φ, as `linear` and `delta` (d_φ = floor(B / d_v); d_k without a budget),
//               plus (b − 1)(d_k + d_v) for the pairs of an unfinished mini-batch (b > 1).
// Parameters:   lr = 0.5 (η in (0, 1]: one step at b = 1 contracts for 2η ≤ 2; lr=best races
//               0.005 … 0.75, delta's β list halved), batch = 1 (best: 1, 4, 16),
//               steps = 1 (best: 1, 2, 4).
// Departures:   no residual x + LN(f(x)) (TTT's output path; a residual adds the query to a
//               read whose target is an unrelated value), no learned projections θ_K, θ_V, θ_Q
//               (the task's codes are used as given), a constant η rather than the paper's
//               token-dependent η(x) = η_base σ(θ_lr x).
// Source:       Sun et al. 2024, "Learning to (Learn at Test Time): RNNs with Expressive Hidden
//               States" (TTT-Linear, §2.1–2.5).
//
// The memory is OnlineMlp (memories/deep/online_mlp.hpp) at depth 1 without momentum; its
// state is W (row-major, state()[i * d_φ + j] = W(i, j)), then, with b > 1, the pending pairs.
#pragma once

#include "memories/deep/online_mlp.hpp"
