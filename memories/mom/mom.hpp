// memcap/memories/mom/mom.hpp — Mixture-of-Memories: M recurrent memories sharing one budget, a
// router writing each token to its top-k memories and mixing their reads.
//
// Stores:       M routed memories and, with shared=1, one shared memory, each the base memory
//               (`base=`: any grid-family memory, gated_deltanet by default) built at
//               floor(B / P) floats, P = M + shared (the budget divided equally).
// Write:        the router's scores s = R k (R: M fixed random unit rows, a parameter; untrained,
//               the trained model's W_g x_t), its top k memories (ties to the lower index) take
//               (k, v) with their own write; the others are left exactly as they were; the
//               shared memory takes every pair (Du et al. 2025, MoM: each memory keeps its own
//               state, only the routed ones are updated).
// Read:         o = Σ_{m ∈ topk(q)} g_m o_m(q) (+ o_shared(q)): the routed memories' reads mixed
//               by the router's weights g = softmax(τ s) over the top k, renormalised (τ = inf: the
//               top one alone, weight 1), routed by the query (untrained, the read's token is its
//               query; in the causal form the token routes its write by its key and its read by
//               its query). MoM mixes the routed memories' states by g and reads the mixture,
//               which is the same linear read.
// state_floats: P × the base memory's floats at floor(B / P). M = 1 without a shared memory is
//               the base memory at the whole budget, bit for bit (its parameters drawn first from
//               the same stream; the router, drawn after, is not used).
// Parameters:   memories = 4 (M, 1–64; best: 1, 2, 4, 8), topk = 2 (k ≥ 1, at most M used; best:
//               1, 2), temp = inf (τ; best: inf, 16, 4, 1), shared = 0 (0 or 1), base =
//               gated_deltanet, and the base memory's settings under their own names (as the
//               hybrid's state=).
// Source:       Du, Sun, Lan, Hu & Cheng 2025 (MoM: Linear Sequence Modeling with Mixture-of-Memories).
//
// State layout: the routed memories' states in order, then the shared memory's.
#pragma once

#include "memories/registry.hpp"

#include <vector>

namespace memcap {

/// The mixture's table entry, its `base` choices and settings taken from `table` (the grid
/// family: entries that split into heads and are not caches).
MemoryEntry mom_entry(const std::vector<MemoryEntry>& table);

}  // namespace memcap
