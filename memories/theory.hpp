// memcap/memories/theory.hpp — theory of associative-recall accuracy for three memories.
//
// Pure functions (standard library and Boost.Math only) giving the probability that one
// read of `assoc_recall` is correct: n random unit (key, value) pairs in R^d written, a
// stored key queried (optionally q = unit(k + σz), z ~ N(0, I)), and the read r scored
// correct when it is nearest (Euclidean) to the right value among the M = n stored values.
// Every candidate has unit length, so "nearest" is "largest score S_c = r·v_c", and the
// read is right when the margin S_i − S_c > 0 for every competitor c ≠ i.
//
// Notation. Sphere(d): one coordinate of a uniform unit vector in R^d (equivalently the
// cosine of two independent random directions): density ∝ (1 − t²)^((d−3)/2) on [−1, 1],
// variance 1/d; the cosine a_j = k_j·q of a query with any key it was not built from, and
// b = v_i·v_c of two values, are Sphere(d). φ, Φ: standard normal pdf and cdf.
//
// ---------------------------------------------------------------------------------------
// 1. HRR (hrr_recall): trace T = Σ_j k_j ⊛ v_j of D floats, read r = k_i ⋆ T (circular
//    correlation), natural size D = d.
//
//      p(n, D, M) = ∫ φ(h) Φ((1 + σ_t h) / σ_o)^(M−1) dh,
//      σ_t² = (n − 1)/D + 2D/(D + 2)²  ≈ (n + 1)/D,
//      σ_o² = (n − 2)/D + 4(D + 1)/(D(D + 2))  ≈ (n + 2)/D.
//
//    Derivation. With the unnormalised DFT (capitals), r̂ = conj(K_i) Σ_j K_j V_j and for
//    unit codes Σ_b |K(b)|² = D (Parseval). The target's score is S_i = sig + X:
//    sig = (1/D) Σ_b |K_i(b)|² |V_i(b)|² (mean 1, variance 2D/(D + 2)²: the involution is
//    not the inverse, so the per-bin gain |K_i(b)|² is not flat), and X, the n − 1 other
//    pairs seen through v_i, each of variance sig/D. A competitor's score collects the
//    target's distorted signal s = k_i ⋆ (k_i ⊛ v_i) (E‖s‖² = 2(D + 1)/(D + 2), so
//    variance ‖s‖²/D), its own pair's term (k_i ⋆ (k_c ⊛ v_c))·v_c (variance 2(D + 1)/(D(D + 2)),
//    |V_c|² enters twice) and the other n − 2 pairs (1/D each). The terms are uncorrelated;
//    taking S_i ~ N(1, σ_t²) and the M − 1 scores S_c ~ N(0, σ_o²) independent gives the
//    Frady–Kleyko–Sommer winner-take-all integral; for σ_t = σ_o = 1/s it is
//    ∫ φ(h) Φ(h + s)^(M−1) dh (fks_recall). The plain s = √(D/n) is slightly optimistic:
//    the target carries (n + 1)/D, a competitor (n + 2)/D.
//    Numerics: adaptive Gauss–Kronrod on h ∈ [−13, 13] of exp(log φ + (M − 1) log Φ),
//    log Φ from erfc (asymptotic series below −30): no underflow for M up to 10⁶ and any D
//    (tested to D = 2^20, M = 10⁵).
//    Validity and residuals (model − measured, points; SE over seeds): D = 4096 (400 seeds),
//    n = 128..1024: −0.34..+0.07, all within 0.8 SE. D = 64 (10 000 seeds): n = 32: +0.09,
//    n = 128: +0.12 (3.1 SE), n = 256: +0.03, n = 512: +0.00 — but n = 64: +0.30 (4.6 SE), and
//    n ≤ 16 reads low: n = 4: −1.1, n = 8: −2.6, n = 16: −1.0 (7.5 SE). The misses are
//    finite-D effects that a two-Gaussian model cannot hold: the distorted signal s has a
//    component orthogonal to v_i of norm² 0.94 ± 0.54 at D = 64, correlated (≈ 0.56) with
//    sig, and the key's power spectrum weights all the crosstalk a query sees (relative sd
//    2/√D ≈ 0.25 at D = 64 in the competitors' noise power). Both are shared by all
//    competitors of one query; they dominate when n is small. (A latent-variable version
//    with these as shared factors fixed n ≤ 16 but overshot n ≥ 64 by 0.1–0.4 points, so it
//    is not offered.) The tests run D = 64 at 400 seeds (SE 0.7 points at n = 16), which
//    cannot resolve n = 16's −1.0; 10 000 seeds do (7.5 SE).
//
// ---------------------------------------------------------------------------------------
// 2. and 3. One crosstalk model for the grid and the cache. Both reads are a weighted
//    sum of the stored values, r = w_t v_i + Σ_{j≠i} g(a_j) v_j, with the query–target
//    cosine ρ = k_i·q (1 without noise) and a_j = k_j·q ~ Sphere(d) for j ≠ i:
//      grid  (`linear`, d × d, φ = identity): M q = Σ_j v_j (k_j·q): w_t = ρ, g(a) = a;
//      cache (`softmax`, β on raw dot products): softmax weights; the comparisons do not
//            depend on the normaliser, so divide by e^{βρ}/Z: w_t = 1, g(a) = e^{β(a − ρ)}.
//
//    Exact margin for one competitor. Write r = w_t v_i + g_c v_c + u_c (u_c: the other
//    n − 2 pairs), X = u_c·v_i, U = ‖u_c‖², b = v_i·v_c and v_c = b v_i + √(1 − b²) w with
//    w ⊥ v_i. Then
//      S_i − S_c = (1 − b)(w_t − g_c + X) − √(1 − b²) √(U − X²) τ,   τ ~ Sphere(d − 1),
//    so, given (U, X) and the competitor's own key cosine a_c,
//      P(c beats the target) = H_d((w_t − g(a_c) + X) / √(U − X²)),
//      H_d(z) = P(τ > κ(b) z),  κ(b) = √((1 − b)/(1 + b)),  b ~ Sphere(d),  H_d(−z) = 1 − H_d(z).
//    This holds every finite-d term: the key–key crosstalk g(a_c) of the competitor's own
//    pair, the value–value cosine b (which scales target and competitor together — treating
//    it as independent noise makes the grid 2–3 points too pessimistic at d = 64), and the
//    rest's projection on the target value. H_d is tabulated once per d (log, step 0.004).
//
//    Shared by all competitors of one query, integrated over:
//      X = √U t, t ~ Sphere(d);  U = A·Y, A ~ Gamma with the exact mean (n − 2)μ2 and
//      variance (n − 2)(μ4 − μ2²) of Σ g(a_j)², Y ~ χ²_ν/ν, ν = d/(1 − φ), φ = μ4/(μ4 + (n − 3)μ2²)
//      (the cross terms Σ_{j≠k} g_j g_k v_j·v_k given the weights);
//      ζ ~ N(0, 1/d): the competitors' mutual crosstalk. S_c holds g_c' v_c·v_c' and S_c'
//      holds g_c v_c·v_c' (covariance g_c g_c'/d); the part along the mean weight ḡ is
//      shared with the target and cancels, the rest is a common factor on each competitor's
//      deviation: margin − (g_c − ḡ)ζ, its variance taken from the competitor's own noise;
//      ρ (with noise): ρ = w/√(w² + σ²X²_{d−1}), w = 1 + σz₁; roughly 1/√(1 + σ²(d − 1)).
//    Moments μ2, μ4, ḡ of g(a) are taken over a conditioned on g(a) ≤ w_t: a pair that
//    outweighs the target makes the read wrong through its own competitor term, so given a
//    right read the rest holds none (without this, heavy-tailed cache weights at large β are
//    counted twice).
//
//      p = E_ρ E_{U, t, ζ} [ (1 − G)^(M−1) ],
//      G = E_a [ H_d( (w_t − g(a) − (g(a) − ḡ)ζ + X) / √(U − X² − (g(a) − ḡ)²) ) ].
//
//    Assumptions: competitors are independent given (ρ, U, t, ζ); the laws of U and ζ are
//    moment-matched (Gamma·χ², Gaussian). Numerics: Gauss–Legendre on a (±12 sd), t (±10 sd),
//    ρ (24 nodes graded towards both tails of its distribution), 12 nodes for U and 8 for ζ in
//    probability; converged to < 0.05 points (doubling every rule).
//    Cost: 20–120 ms per call without noise, ~0.4 s with (d = 64); tables per d are kept.
//
//    Grid residuals (model − measured, points): d = 64 (10 000 seeds at n = 192, 256, 384;
//    2000 elsewhere): n ≤ 128: |·| ≤ 0.03; 192: +0.02; 256: −0.11; 384: −0.24 (2.7 SE);
//    512: −0.07; 1024: +0.13. d = 64, σ = 0.12 (1000 seeds), n = 16..128: −0.23..+0.11.
//    d = 256 (300 seeds), n = 1536..4096: −0.61..+0.04, within 1.6 SE. Essay 004's grid,
//    d = 64: 100% to n = 64 (model 99.98), 98.3 at 128 (98.07), 75.9 at 256 (75.90), 31.6 at
//    512 (33.22; memcap measures 33.29 ± 0.20 over 2000 seeds, the essay's 20 seeds read low).
//    The grid misses at n ≫ d only by what the independence of competitors leaves out
//    (values span d dimensions, so n ≫ d competitors are not independent): ≤ 0.25 points.
//
//    Cache residuals: d = 64, β ∈ {0, 1, 2, 3, 4, 8, 16}, σ ∈ {0, 0.12, 0.25},
//    n ∈ {16, 64, 256, 1024} (500 seeds, 84 cells): 83 within 2 SE, the largest misses
//    −1.1 (β = 4, σ = 0.25, n = 64; 2.9 SE) and +0.6 (β = 16, σ = 0.25, n = 256; 2.0 SE).
//    d = 256, β ∈ {2, 4, 8, 16}, σ ∈ {0.06, 0.12}, n ∈ {256, 1024, 4096} (200 seeds): all
//    within 1.8 SE. β = 0 gives chance 1/n exactly (exchangeable); without noise and β ≥ 4
//    at d = 64 it is 100% to n = 1024 (the nearest other key, cosine ~0.4, carries e^{−β·0.6}
//    of the target's weight); under noise the dominant term is n·P(a > ρ), which the
//    competitor integral holds exactly.
//    Valid: d ≥ 4, any n, β ≥ 0 with βρ up to ~700 (e^{β(a−ρ)} in double); accurate to
//    ~0.5 points wherever measured except strong noise with moderate β (σ√d ≥ 2, i.e.
//    ρ ≲ 0.5, and 3 ≤ β ≤ 4 at d = 64), where it reads up to ~1.1 points low: the positive
//    dependence between several strong competitors there is only partly in ζ.
//
// ---------------------------------------------------------------------------------------
// 4. The grid's recall as a function of its key set's coherence (keyset_crosstalk,
//    keyset_grid_recall): associative recall over a vocabulary of V symbols (assoc_recall:
//    vocab=V), n of them stored. The grid's read of stored key k_i with query q is
//    r = Σ_j v_j (k_j·q); what the key set decides is the crosstalk energy of a read,
//    ε = Σ_{j≠i} (k_j·k_i)² over the other stored keys:
//      random unit keys          ε = (n − 1)/d  (each cosine has variance 1/d);
//      unit-norm tight frame     Σ_{j≠i} (f_j·f_i)² = V/d − 1 over all V − 1 others (the
//        of V (keys=frame)       Welch bound is this frame potential, the least any V unit
//                                vectors in d dimensions reach), so a random n-subset holds
//                                ε = (n − 1)(V/d − 1)/(V − 1); 0 for V ≤ d (orthonormal keys:
//                                exact recall), (n − d)/d for V = n.
//    With query noise (cosine ρ to the key, ρ² ≈ 1/(1 + σ²(d − 1))) the read's crosstalk is
//    ε_q = ρ² ε + (1 − ρ²)(n − 1)/d (the noise direction meets every stored key as a random
//    direction does). With r = ρ v_i + c_c v_c + u for one competitor c (u the rest, energy
//    ≈ ε_q), the margin is S_i − S_c = (1 − b)(ρ − c_c) + u·(v_i − v_c), b = v_i·v_c: the
//    value cosine scales the margin (it does not move its sign, so it is left out, as
//    section 2 found it must be), c_c has variance ε_q/(n − 1), and u·v_i (shared by every
//    competitor) and u·v_c each variance ε_q/d. As the winner-take-all integral:
//      p = wta_recall(ρ, √(ε_q/d), √(ε_q/(n − 1) + ε_q/d), n).
//    It is cruder than section 2's model (no value–value cosine, no finite-d sphere laws),
//    and for the same random keys it is compared with it and with measurement in the
//    learned-keys study (docs/learned-keys.md), as the frame's model is with the frame's
//    measurements. A learned key set has no model here: its coherence is whatever training
//    reached. For the other memories the reference geometry differs and no model is given:
//    the cache needs separation on the sphere (its read is exact once the nearest other
//    stored key is far enough below the query's cosine, for any V), the delta rule needs
//    linear independence (n ≤ d independent keys are recalled exactly at β = 1 whatever
//    their coherence), HRR needs unitary keys (flat power spectrum, |F k| = 1 in every bin).

#pragma once

#include <cstdint>

namespace memcap::theory {

/// log Φ(x), accurate for every finite x (erfc; Mills' ratio series below −30).
double normal_log_cdf(double x);

/// ∫ φ(h) Φ((gap + sd_target·h) / sd_other)^(candidates−1) dh: the target's score
/// N(gap, sd_target²) above candidates − 1 independent N(0, sd_other²) scores.
double wta_recall(double gap, double sd_target, double sd_other, double candidates);

/// The Frady–Kleyko–Sommer integral ∫ φ(h) Φ(h + s)^(M−1) dh.
double fks_recall(double s, double candidates);

/// HRR scores at trace size D with n stored pairs (section 1): the target's mean
/// (signal_mean = 1) and the variances of its score and of a competitor's.
struct HrrMoments {
    double signal_mean, signal_var, target_var, other_var;
};
HrrMoments hrr_moments(std::int64_t n, std::int64_t D);

/// HRR recall, trace of D floats (D = d at the natural size), n pairs, `candidates` values
/// to choose among (n in assoc_recall). D ≥ 2.
double hrr_recall(std::int64_t n, std::int64_t D, std::int64_t candidates);

/// Linear d × d grid (identity features), n pairs, query noise σ per entry (section 2). d ≥ 4.
double grid_recall(std::int64_t n, int d, double noise_sigma = 0.0);

/// Softmax cache without eviction, β on raw dot products, query noise σ (section 3). d ≥ 4.
double cache_recall(std::int64_t n, int d, double beta = 16.0, double noise_sigma = 0.0);

/// Crosstalk energy per read of the grid, ε = Σ_{j≠i} (k_j·k_i)² over n stored keys (section 4):
/// random unit keys (vocab = 0 or keys=random: (n − 1)/d), or n of a unit-norm tight frame of
/// `vocab` vectors (frame = true: (n − 1)(V/d − 1)/(V − 1), 0 when V ≤ d). n ≥ 1, d ≥ 1.
double keyset_crosstalk(std::int64_t n, int d, std::int64_t vocab, bool frame);

/// The d × d grid's recall (identity features) of n pairs whose keys have crosstalk energy
/// `crosstalk` per read (section 4), with query noise σ per entry. d ≥ 1, n ≥ 2.
double keyset_grid_recall(std::int64_t n, int d, double crosstalk, double noise_sigma = 0.0);

/// P(t > x) for t ~ Sphere(d) (one coordinate of a uniform unit vector in R^d).
double sphere_tail(int d, double x);

/// Chained lookups with cleanup (chain_recall:cleanup=nearest): accuracy at hop h from the
/// one-hop accuracy p1 among n items. Each hop reads a clean stored item, so hops fail
/// independently; the items form one cycle, so a wrong item never leads back by itself —
/// only a second error that lands on exactly the right item does, about (1 − p1)/(n − 1)
/// per hop (errors spread evenly over the n − 1 wrong items):
///   p_h = p1 · p_{h−1} + (1 − p_{h−1}) (1 − p1)/(n − 1),   p_1 = p1,
/// i.e. p_h − 1/n = (p1 − 1/n) (p1 − (1 − p1)/(n − 1))^(h−1): p1^h plus at most about
/// h (1 − p1)/(n − 1), decaying to chance 1/n, its fixed point. n ≥ 2, h ≥ 1.
double chain_cleanup_accuracy(double p1, std::int64_t n, int h);

}  // namespace memcap::theory
