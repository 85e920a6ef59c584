// memcap/memories/theory/crosstalk.hpp — one crosstalk model for the linear grid and the softmax cache.
//
// Both reads are a weighted sum of the stored values, r = w_t v_i + Σ_{j≠i} g(a_j) v_j,
// with a_j the cosine of the query with the other stored keys: the d × d grid (φ the
// identity) has w_t = ρ, g(a) = a; the cache without eviction, β on raw dot products,
// has w_t = 1, g(a) = e^{β(a − ρ)} (the softmax normaliser cancels from the comparisons).
// The accuracy is the exact margin of one competitor on the sphere, integrated over the
// crosstalk all competitors of one query share (derivation, numerics, validity and
// measured residuals: docs/theory.md, sections 2 and 3).
#pragma once

#include <cstdint>

namespace memcap::theory {

/// Linear d × d grid (identity features), n pairs, query noise σ per entry. d ≥ 4.
double grid_recall(std::int64_t n, int d, double noise_sigma = 0.0);

/// Softmax cache without eviction, β on raw dot products, query noise σ. d ≥ 4.
double cache_recall(std::int64_t n, int d, double beta = 16.0, double noise_sigma = 0.0);

/// The same two at real n ≥ 1 (the capacity lines' crossings, capacity.hpp): the model
/// takes n as the candidates' count M, the exponent of (1 − G)^(M−1), and the n − 2 rest
/// pairs as the shape of U's Gamma law, so it is a smooth function of n between the
/// integers, and equals the integer versions at integer n.
double grid_recall_real(double n, int d, double noise_sigma = 0.0);
double cache_recall_real(double n, int d, double beta = 16.0, double noise_sigma = 0.0);

/// P(t > x) for t ~ Sphere(d) (one coordinate of a uniform unit vector in R^d).
double sphere_tail(int d, double x);

}  // namespace memcap::theory
