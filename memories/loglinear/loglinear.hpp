// memcap/memories/loglinear/loglinear.hpp — log-linear attention: a Fenwick tree of linear-attention
// states, one per level, read with level weights; a budget caps the number of levels.
//
// Stores:       L grids S_0 … S_{L−1}, each d_v × d_φ (as `linear`'s grid), and, when L ≥ 2, the
//               write count modulo 2^(L−1) (1 float: where the next merge goes follows its bits).
//               After t + 1 writes, level 0 holds token t alone and level ℓ ≥ 1 the block of
//               2^(ℓ−1) tokens that the Fenwick (binary indexed) partition of [0, t) gives bit ℓ − 1
//               of t (empty when that bit is 0); the last level L − 1 holds every block above it
//               too (the cap: the tree's levels ≥ L − 1 merged into one).
// Write:        with n the writes before this one and c = n mod 2^(L−1): the target level
//               ℓ* = L − 1 when c = 0, else min(ctz(c) + 1, L − 1); S_{ℓ*} += S_0 + … + S_{ℓ*−1},
//               those levels emptied (the Fenwick carry: blocks of 1, 1, 2, …, 2^(ℓ*−2) tokens
//               become one block of 2^(ℓ*−1)); then S_0 += v φ(k)ᵀ. At L = 1 there is no merge:
//               S_0 += v φ(k)ᵀ, the linear grid's write.
// Read:         Σ_ℓ λ_ℓ S_ℓ φ(q), λ_ℓ = r^ℓ (a fixed geometric profile; the paper's λ_t^(ℓ) are
//               data-dependent, computed from the token by a trained layer; untrained, the
//               profile's ratio r is raced). λ_0 = 1; r = 1 is the linear grid at the levels'
//               width, r < 1 weights recent blocks above old ones.
// state_floats: L d_v d_φ (+ 1 when L ≥ 2), d_φ = floor(floor((B − [L ≥ 2]) / L) / d_v) (proj;
//               dpfp rounds it down to a multiple of 2ν): the budget less the counter, divided
//               equally among the levels, each level the linear grid at its share. Without a
//               budget d_φ = d_k per level. L = 1 is `linear` at the same budget, bit for bit.
// Parameters:   levels = 3 (L, 1–16; best: 1, 2, 3, 4, 6, 8), ratio = 0.5 (r in (0, 1]; best:
//               1, 0.7, 0.5, 0.3, 0.1), phi = proj, nu = 1 (as `linear`'s: one map φ for every
//               level, drawn from the parameter stream as `linear` draws it).
// Source:       Guo, Yang, Goel, Xing, Dao & Kim 2025 ("Log-Linear Attention"); the plain
//               linear-attention base (its gated variants, log-linear Mamba-2 and Gated DeltaNet,
//               are not built).
//
// State layout: S_0, …, S_{L−1}, each row-major d_v × d_φ, then the counter (L ≥ 2).
#pragma once

#include "core/rng.hpp"
#include "memories/grid/feature_map.hpp"
#include "memories/memory.hpp"

#include <string>

namespace memcap {

class LogLinear final : public Memory {
public:
    /// The one sizing function: each level's feature map, the levels and the state floats.
    struct Dims {
        FeatureMap::Dims phi;  // one level's φ: d_φ = phi.dim
        int levels = 1;
        std::int64_t d_value = 0;
        std::int64_t min_budget = 0;  // L levels of φ's smallest dimension (+ the counter)
        std::int64_t counter() const { return levels >= 2 ? 1 : 0; }
        std::int64_t level_floats() const { return d_value * phi.dim; }
        std::int64_t state_floats() const { return levels * level_floats() + counter(); }
    };
    static Dims size(const MemoryShape& shape, const std::string& phi, int nu, int levels);

    LogLinear(const MemoryShape& shape, const std::string& phi, int nu, int levels, double ratio, Rng& rng);

    void reset() override { state_.setZero(); }
    void write(ConstVecRef key, ConstVecRef value) override;
    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    void read(ConstVecRef query, VecRef out) const override;
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override;
    std::int64_t state_floats() const override { return state_.size(); }
    ConstStateView state() const override { return ConstStateView(state_.data(), state_.size()); }
    StateRef mutable_state() override { return StateRef(state_.data(), state_.size()); }
    std::int64_t param_floats() const override { return phi_.param_floats(); }

private:
    using Grid = Eigen::Map<RowMat>;
    using ConstGrid = Eigen::Map<const RowMat>;
    Grid level(int l) { return Grid(state_.data() + l * level_floats_, dv_, phi_.dim()); }
    ConstGrid level(int l) const { return ConstGrid(state_.data() + l * level_floats_, dv_, phi_.dim()); }
    /// The Fenwick carry before a write (L ≥ 2), and the counter's step.
    void carry();
    /// Σ_ℓ λ_ℓ S_ℓ (L ≥ 2).
    RowMat weighted() const;
    RowMat features(ConstMatRef x) const {
        RowMat f(x.rows(), phi_.dim());
        phi_.apply(x, f);
        return f;
    }

    FeatureMap phi_;
    Eigen::Index dv_;
    int levels_;
    float ratio_;
    Eigen::Index level_floats_;
    Vec state_;  // [S_0 | … | S_{L−1} | counter]
};

}  // namespace memcap
