// memcap/memories/titans/titans.hpp — Titans' neural long-term memory: an MLP trained at test
// time with momentum ("surprise") and a forgetting gate.
//
// Stores:       the weights of an MLP M of `depth` layers, d_k → h → … → h → d_v (GELU, no
//               biases), and the momentum S of the same shape: both are state. The initial
//               weights (first layer N(0, 1) on unit keys, hidden N(0, 1/h), last 0) are
//               parameters drawn per seed.
// Write:        keys ℓ2-normalised (as Titans normalises its keys and queries); per pair
//                   S_t = μ S_{t−1} − θ ∇ℓ(M_{t−1}; k_t, v_t),   M_t = (1 − α) M_{t−1} + S_t,
//               ℓ(M; k, v) = ‖M(k) − v‖² (Behrouz et al. 2025, eq. 13–14: η_t = μ the surprise
//               decay, θ_t the learning rate, α_t the forgetting gate, here constants raced on
//               tuning seeds). With batch b > 1 the gradients of a mini-batch are taken at the
//               weights it starts from (the paper's chunked, parallel form, §3.2); `steps`
//               repeats each batch's update.
// Read:         M(q), q normalised: a forward pass without an update (the paper's retrieval y = M*(q)).
// state_floats: 2 (h d_k + (depth − 2) h² + d_v h): weights and momentum, + (b − 1)(d_k + d_v)
//               for a pending mini-batch; h the largest that fits the budget (4 d_k without a budget).
// Parameters:   lr = 0.25 (θ_t = lr / ‖a_t‖², a_t the last layer's input, memories/deep/
//               online_mlp.hpp; in (0, 1], best 0.02, 0.05, 0.1, 0.25, 0.5), momentum = 0.5 (μ in [0, 1); best 0, 0.5,
//               0.9), forget = 0 (α in [0, 1); best 0, 0.01, 0.1), depth = 2 (2–4; best 2, 3),
//               batch = 1, steps = 1 (as ttt_mlp's). μ = α = 0 is TTT-MLP at half the width
//               (the unused buffer still counts: it is the state Titans keeps).
// Departures:   no residual or layer norm in M (memories/deep/online_mlp.hpp); constant gates.
// Source:       Behrouz, Zhong & Mirrokni 2025, "Titans: Learning to Memorize at Test Time".
//
// The memory is OnlineMlp (memories/deep/online_mlp.hpp) with momentum; the state is the
// layers' weights (each row-major, first layer first), then the momentum in the same order, then
// the pending pairs (keys, then values).
#pragma once

#include "memories/deep/online_mlp.hpp"
