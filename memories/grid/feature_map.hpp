// memcap/memories/grid/feature_map.hpp — fixed feature maps φ for the grid memories.
//
// A grid memory of d_v × d_φ floats needs keys of d_φ features. When the
// budget gives exactly d_φ = d_k columns, φ is the identity. Otherwise φ is a
// fixed (never trained) map chosen by the backend's `phi` parameter:
//
//   proj  φ(x) = P x, P a random semi-orthogonal d_φ × d_k matrix (from the QR
//         of a Gaussian matrix): orthonormal columns when d_φ ≥ d_k, so inner
//         products are kept exactly; orthonormal rows scaled by √(d_k/d_φ) when
//         d_φ < d_k, so they are kept on average (a Johnson–Lindenstrauss
//         projection). It is linear, so the feature space has rank
//         min(d_φ, d_k): above d_φ = d_k a bigger grid reads exactly like the
//         d × d one — more floats, no more capacity.
//   dpfp  Deterministic parameter-free projection (Schlag, Irie & Schmidhuber
//         2021, "Linear Transformers Are Secretly Fast Weight Programmers",
//         §4.2): r = [relu(y), relu(−y)] ∈ R^{2m}, φ_{i+2m(j−1)} = r_i · r_{(i+j) mod 2m},
//         j = 1..ν, so d_φ = 2mν. Here y = x when m = d_k and y = P x (as in
//         proj, to m dimensions) otherwise, with m = floor(d_φ_max / 2ν).
//         Non-linear, so capacity keeps growing with the budget.
//   taylor Based's second-order Taylor feature map (Arora et al. 2024, "Simple linear
//         attention language models balance the recall-throughput tradeoff", §3.1):
//         the kernel of [1, y, vec(y yᵀ)/√2] with y = x when m = d_k and y = P x (as in proj,
//         to m dimensions) otherwise. y yᵀ is symmetric, so only its unique entries are kept:
//         φ(x) = [1, y, y_i²/√2 (i = j), y_i y_j (i > j)], the lower triangle row by row (the
//         two off-diagonal copies y_i y_j/√2 folded into one, as zoology's Based stores it).
//         m is the largest with 1 + m + m(m+1)/2 ≤ d_φ_max, so d_φ = 1 + m + m(m+1)/2, and
//         φ(q)·φ(k) = 1 + y_q·y_k + (y_q·y_k)²/2, the Taylor expansion of exp (the same
//         kernel as the full vec(y yᵀ)/√2).
//
// Layout: apply() maps an n × d_k batch (row per vector) to n × dim().
#pragma once

#include "core/rng.hpp"
#include "core/types.hpp"

#include <cstdint>
#include <string>

namespace memcap {

/// The backward pass of normalising rows to unit length (normalise_rows): for f = raw/|raw|,
/// ∂raw = (I − f fᵀ) ∂f / |raw| row by row, 0 where raw = 0. The delta-family grids and MesaNet.
RowMat unit_rows_backward(const RowMat& raw, ConstMatRef d_f);

class FeatureMap {
public:
    /// The map's dimensions (its one sizing function; the constructor uses it).
    struct Dims {
        int m = 0;        // dimension after the projection, before DPFP or Taylor (= d_in: no projection)
        int dim = 0;      // output dimension d_φ: m (proj), 2νm (dpfp) or 1 + m + m(m+1)/2 (taylor)
        bool identity = false;      // m = d_in: no projection
        std::int64_t param_floats = 0;  // the projection's m × d_in floats (0 when identity)
        std::int64_t build_scratch_bytes = 0;  // the QR that draws the projection (doubles)
    };
    /// kind: "proj", "dpfp" or "taylor"; max_dim: the most features the budget allows; nu: DPFP's ν.
    /// UsageError when d_φ would not fit an int.
    static Dims size(const std::string& kind, int d_in, std::int64_t max_dim, int nu);

    /// `scale` multiplies y before the Taylor map's products (taylor only: the norm a trained
    /// projection would give the keys; 1 keeps y at the key's norm).
    FeatureMap(const std::string& kind, int d_in, std::int64_t max_dim, int nu, Rng& rng, double scale = 1.0);

    /// Smallest max_dim this kind accepts (proj: 1; dpfp: 2ν; taylor: 3, m = 1).
    static std::int64_t min_dim(const std::string& kind, int nu) {
        return kind == "dpfp" ? 2 * nu : kind == "taylor" ? 3 : 1;
    }

    /// How many projections this process took from the cache of earlier draws instead of
    /// drawing them (process-wide; the cache changes no bits, so only tests ask).
    static std::uint64_t kept_projections();

    int dim() const { return dim_; }
    /// Whether apply(x) is x itself (the plain map with no projection): callers may read x.
    bool passes_through() const { return identity_ && !taylor_ && !dpfp_; }
    std::int64_t param_floats() const { return proj_.size(); }
    void apply(ConstMatRef x, MatRef phi) const;
    /// The backward pass of apply at `x`: d_x = (∂φ/∂x)ᵀ d_phi, row by row (d_phi: n × dim(),
    /// d_x: n × d_in). proj is linear (d_x = d_phi P); dpfp differentiates its products of
    /// relus (the relu's derivative at 0 taken as 0).
    void backward(ConstMatRef x, ConstMatRef d_phi, MatRef d_x) const;

private:
    bool dpfp_ = false;
    bool taylor_ = false;
    float scale_ = 1.0f;  // taylor: y = scale · P x
    bool identity_ = false;
    int nu_ = 1;
    int m_ = 0;  // dimension after the projection (before DPFP)
    int dim_ = 0;
    RowMat proj_;  // m × d_in, empty when the projection is the identity
};

}  // namespace memcap
