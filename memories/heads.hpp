// memcap/memories/heads.hpp — a memory split into h heads (the key `heads`).
//
// heads=h splits a memory's width and state into h independent heads, as flash-linear-attention
// and zoology count a multi-head layer's state (h × per-head state): head i reads and writes
// coordinates [i d_k/h, (i+1) d_k/h) of every key and query and [i d_v/h, (i+1) d_v/h) of every
// value and read, and is the same backend built for d_k/h, d_v/h and a budget of floor(B/h)
// floats. A read is the concatenation of the heads' reads. So at one budget a grid of h heads
// keeps h blocks of (d_v/h) × d_φ (the same d_φ = floor(B/d_v) as one head, each fed d_k/h
// coordinates of the key), and a cache of h heads keeps each pair's h slices, each head
// attending on its own slice of the query. heads=1 (or left out) is the memory itself, bit for
// bit. Refused: h not dividing d_k and d_v, a budget below h × the per-head minimum, a task that
// declares a salience feature (the mark would reach one head only). The causal backward is
// each head's on its slice, the shared gate inputs' gradients summed over the heads (a head
// without one refuses it, as the memory itself does).
//
// State layout: head 0's state, then head 1's, and so on (each head's own layout).
#pragma once

#include "memories/registry.hpp"

namespace memcap {

/// The optional key `heads` (h ≥ 1; 1 = the memory itself) with its candidates 1, 2, 4, 8.
ParamInfo heads_param();
/// h of a spec that may leave `heads` out (1).
int spec_heads(const Spec& spec);
/// Gives `e` the key `heads` and makes its sizing function, factory and cost model honour it:
/// heads=1 (or left out) is the entry as it was; h > 1 builds h copies at the per-head shape
/// (see the header). The recall, horizon and zoology models describe one head: none at h > 1.
void add_heads(MemoryEntry& e);

}  // namespace memcap
