// memcap/memories/hybrid/hybrid.hpp — one budget divided between a window and a recurrent state.
//
// Stores:       a window — the softmax cache (memories/softmax/), FIFO: it keeps the last
//               C = floor(share · B / (d_k + d_v)) pairs — beside a recurrent state, any memory
//               of the grid family (`state=`: linear, delta, gated_deltanet, …) built at the
//               floats the window leaves, B_s = B − C (d_k + d_v). Every pair is written to both
//               parts (as in a stack of window and recurrent layers, where every layer sees every
//               token).
// Read:         the window's read and the state's read combined, one of two ways:
//               · sum (the default, `slot` left out): o = o_window + o_state — the residual
//                 stream's sum of a window layer and a recurrent layer side by side (Based,
//                 Samba, RecurrentGemma and the other layer hybrids add their mixers' outputs
//                 into one residual stream), untrained: both with weight 1;
//               · slot (`slot=s`): the state's read enters the window's softmax as one more slot
//                 with the constant logit s, o = Σ_i e^{β k_i·q} v_i / (Z + e^s) + e^s o_state /
//                 (Z + e^s), Z = Σ_i e^{β k_i·q}: one normaliser shared by the window's scores
//                 and the state, as LoLA (McDermott et al. 2025) and LoLCATs (Zhang et al.
//                 2025) share the softmax denominator between the window and the linear state's
//                 kernel estimate; untrained, the state's mass φ(q)ᵀ Σ φ(k) is the constant e^s
//                 (a grid keeps no normaliser). When the query's key is in the window its score
//                 β k·q outweighs e^s and the window answers; otherwise the state does. The slot's
//                 logit is the window cache's null slot (memories/softmax/): its row counts.
// state_floats: the window's stored rows (+ the slot's row) + the state's floats ≤ B.
//               share = 1 is the cache alone (the whole budget; bit for bit `softmax`),
//               share = 0 the state alone (bit for bit the state memory given the same
//               parameter stream); 0 < share < 1 needs at least one window pair (two rows with
//               a slot) and the state's minimum in what is left (else the budget is below the
//               minimum: a UsageError naming it). A part alone is still wrapped: it reads and writes as
//               that memory, and refuses what the hybrid's entry does not declare (per-token
//               gate inputs, hidden pairs), as the hybrid does at every share.
// Parameters:   share = 0.5 ([0, 1]; share=best races 0, 1/8, 1/4, 1/2, 3/4, 7/8, 1),
//               state = gated_deltanet, window_beta = 16 (the cache's beta, raced as it),
//               slot (optional: the slot read's logit), and the state memory's own settings
//               under their own names (alpha, beta, gamma, …; optional: left out, the state
//               memory's default).
// Source:       Arora et al. 2024 (Based); De et al. 2024 (Griffin/RecurrentGemma); Ren et al.
//               2025 (Samba); McDermott et al. 2025 (LoLA).
//
// State layout: the window's state (its rows, memories/softmax/) then the state memory's.
#pragma once

#include "memories/registry.hpp"

#include <vector>

namespace memcap {

/// The hybrid's table entry, its `state` choices and settings taken from `table` (the grid
/// family: entries that split into heads and are not caches).
MemoryEntry hybrid_entry(const std::vector<MemoryEntry>& table);

}  // namespace memcap
