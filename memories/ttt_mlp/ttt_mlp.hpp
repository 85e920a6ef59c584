// memcap/memories/ttt_mlp/ttt_mlp.hpp — TTT-MLP: a two-layer MLP trained at test time.
//
// Stores:       the weights of f(x) = W₂ gelu(W₁ x), W₁: h × d_k, W₂: d_v × h (no biases),
//               every one of them state (what changes while writing); the initial weights
//               (W₁ ~ N(0, 1) on unit keys, W₂ = 0) are parameters drawn per seed.
// Write:        mini-batch gradient descent on ℓ(W; k, v) = ‖f_W(k) − v‖², keys normalised to
//               unit length: pairs in mini-batches of b, each batch's gradients taken at the
//               weights it starts from, W ← W − η_t Σ_t ∇ℓ(W_start; k_t, v_t), `steps` times
//               per batch (TTT's inner loop, §2.2–2.4), with the token's rate η_t = lr / ‖a_t‖²,
//               a_t = gelu(W₁ k_t) (memories/deep/online_mlp.hpp: lr is then scale-free).
// Read:         f_W(q), q normalised.
// state_floats: h (d_k + d_v) + (b − 1)(d_k + d_v) for a pending mini-batch, h the largest
//               that fits the budget (4 d_k without a budget: the paper's expansion factor of 4).
// Parameters:   lr = 0.25 (in (0, 1]; lr=best races 0.02, 0.05, 0.1, 0.25, 0.5), batch = 1
//               (best: 1, 4, 16), steps = 1 (best: 1, 2, 4).
// Departures:   TTT-MLP's output is x + LN(f_res(x)) with biases; here f alone (see
//               memories/deep/online_mlp.hpp for why), GELU as in the paper.
// Source:       Sun et al. 2024, "Learning to (Learn at Test Time): RNNs with Expressive Hidden
//               States" (TTT-MLP).
//
// The memory is OnlineMlp (memories/deep/online_mlp.hpp) at depth 2 without momentum; the
// state is W₁ then W₂, each row-major, then the pending pairs (keys, then values).
#pragma once

#include "memories/deep/online_mlp.hpp"
