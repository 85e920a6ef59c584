// memcap/memories/theory/information.hpp — how many pairs any state of B bits can hold.
//
// assoc_recall writes n pairs whose keys and values are drawn independently; a read is
// scored against the n stored values, so what a memory must keep is which value goes with
// which key: one of n! assignments, equally likely. Whatever the memory, its reader knows
// the keys and the candidate values, so recalling every pair right needs a state that
// tells the n! assignments apart:
//
//     B ≥ log₂ n!  ≈  n log₂ n − 1.44 n            (exact recall; max_pairs_exact)
//
// Allowing a fraction 1 − a of an episode's reads to be wrong, one state is right on at
// least a·n reads for at most C(n, e) · n^e assignments (e = ⌊(1 − a) n⌋ reads left free,
// each any of n values), so among 2^B states few assignments can be read at accuracy ≥ a
// unless (min_bits_at)
//
//     B ≥ log₂ n! − log₂ C(n, e) − e log₂ n.
//
// Both count assignments only: they hold under query noise too (noise can only make a
// read harder), but there they are far from what any memory reaches. The report draws
// the exact line beside capacity against state bits and gives each memory's capacity as
// a fraction of it. docs/theory.md, section 9.
#pragma once

#include <cstdint>

namespace memcap::theory {

/// log₂ n!, for n ≥ 0 (lgamma; exact to about 1e-12 relative).
double log2_factorial(std::int64_t n);
/// The largest n with log₂ n! ≤ bits (0 when not even one pair: bits < 0).
std::int64_t max_pairs_exact(double bits);
/// Bits a state needs for one episode of n pairs to be read right at accuracy ≥ a, a in (0, 1]:
/// log₂ n! − log₂ C(n, e) − e log₂ n with e = (1 − a) n as a real (factorials through Γ; e at
/// least ⌊(1 − a) n⌋ makes it at most the counting bound, so still a bound), never below 0.
/// At a = 1 it is log₂ n!.
double min_bits_at(std::int64_t n, double accuracy);
/// The largest n with min_bits_at(n, a) ≤ bits.
std::int64_t max_pairs_at(double bits, double accuracy);

}  // namespace memcap::theory
