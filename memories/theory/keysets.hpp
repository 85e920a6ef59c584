// memcap/memories/theory/keysets.hpp — the grid's recall as a function of its key set's coherence.
//
// Associative recall over a vocabulary of V symbols (assoc_recall:vocab=V), n of them
// stored. What the key set decides is the crosstalk energy of a read,
// ε = Σ_{j≠i} (k_j·k_i)² over the other stored keys; the grid's accuracy follows from it
// through the winner-take-all integral (derivation and scope: docs/theory.md, section 4).
#pragma once

#include <cstdint>

namespace memcap::theory {

/// Crosstalk energy per read of the grid, ε = Σ_{j≠i} (k_j·k_i)² over n stored keys:
/// random unit keys (frame = false: (n − 1)/d), or n of a unit-norm tight frame of
/// `vocab` vectors (frame = true: (n − 1)(V/d − 1)/(V − 1), 0 when V ≤ d). n ≥ 1, d ≥ 1.
double keyset_crosstalk(std::int64_t n, int d, std::int64_t vocab, bool frame);

/// The d × d grid's recall (identity features) of n pairs whose keys have crosstalk energy
/// `crosstalk` per read, with query noise σ per entry:
/// wta_recall(ρ, √(ε_q/d), √(ε_q/(n − 1) + ε_q/d), n), ε_q = ρ² ε + (1 − ρ²)(n − 1)/d,
/// ρ² = 1/(1 + σ²(d − 1)). d ≥ 1, n ≥ 2.
double keyset_grid_recall(std::int64_t n, int d, double crosstalk, double noise_sigma = 0.0);

}  // namespace memcap::theory
