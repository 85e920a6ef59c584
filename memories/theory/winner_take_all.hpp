// memcap/memories/theory/winner_take_all.hpp — the winner-take-all integral every recall model ends in.
//
// A read is right when the target's score beats each of the other candidates' scores;
// with the target's score N(gap, sd_target²) and the others independent N(0, sd_other²),
// that probability is one integral over the target's score (docs/theory.md).
#pragma once

namespace memcap::theory {

/// log Φ(x), accurate for every finite x (erfc; Mills' ratio series below −30).
double normal_log_cdf(double x);

/// ∫ φ(h) Φ((gap + sd_target·h) / sd_other)^(candidates−1) dh: the target's score
/// N(gap, sd_target²) above candidates − 1 independent N(0, sd_other²) scores.
/// Adaptive Gauss–Kronrod on h ∈ [−13, 13] of exp(log φ + (M − 1) log Φ): no underflow
/// for M up to 10⁶.
double wta_recall(double gap, double sd_target, double sd_other, double candidates);

/// The Frady–Kleyko–Sommer integral ∫ φ(h) Φ(h + s)^(M−1) dh.
double fks_recall(double s, double candidates);

}  // namespace memcap::theory
