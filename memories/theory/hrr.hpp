// memcap/memories/theory/hrr.hpp — recall of the holographic memory (HRR) at its natural size.
//
// Trace T = Σ_j k_j ⊛ v_j of D floats, read r = k_i ⋆ T (circular correlation), n pairs,
// the read scored against `candidates` unit values. The target's score and a competitor's
// are taken as independent Gaussians with the moments below, and the winner-take-all
// integral gives the accuracy (derivation, validity and measured residuals:
// docs/theory.md, section 1).
#pragma once

#include <cstdint>

namespace memcap::theory {

/// HRR scores at trace size D with n stored pairs: the target's mean (signal_mean = 1)
/// and the variances of its signal, of its score and of a competitor's score:
/// target_var = 2D/(D + 2)² + (n − 1)/D, other_var = (n − 2)/D + 4(D + 1)/(D(D + 2)).
struct HrrMoments {
    double signal_mean, signal_var, target_var, other_var;
};
HrrMoments hrr_moments(std::int64_t n, std::int64_t D);

/// HRR recall, trace of D floats (D = d at the natural size), n pairs, `candidates` values
/// to choose among (n in assoc_recall). D ≥ 2.
double hrr_recall(std::int64_t n, std::int64_t D, std::int64_t candidates);

/// HRR recall at D = d with query noise σ per entry, n pairs among n candidates: the
/// query is ρ k + √(1 − ρ²) u with ρ = 1/√(1 + σ²D); the target's mean is scaled by ρ,
/// and u ⋆ T adds crosstalk (1 − ρ²)(n + 1)/D to every score's variance. σ = 0 is
/// hrr_recall(n, D, n).
double hrr_noisy_recall(std::int64_t n, std::int64_t D, double sigma);

/// The same two at real n ≥ 1 (the capacity lines' crossings, capacity.hpp): n enters the
/// moments linearly and the candidates as the exponent M − 1 of the winner-take-all
/// integral, so the model is a smooth function of n between the integers, and equals the
/// integer versions at integer n.
double hrr_recall_real(double n, std::int64_t D, double candidates);
double hrr_noisy_recall_real(double n, std::int64_t D, double sigma);

}  // namespace memcap::theory
