// memcap/memories/delta_grid.hpp — delta-rule outer-product grid (fast weights with editing).
//
// Stores:       one grid M of d_v × d_φ floats (M = 0 after reset).
// Write:        M += β_w (v − M φ(k)) φ(k)ᵀ, one pass in write order; φ(k) is
//               normalised to unit length, so β_w = 1 replaces the value stored
//               under k by v (the old read of k is subtracted before writing).
// Read:         M φ(q), φ(q) normalised the same way.
// state_floats: d_v × d_φ, exactly as `linear` (d_φ = floor(B / d_v), or d_k
//               without a budget).
// Parameters:   beta = 1 (real in (0, 2]: the update contracts for 0 < β_w < 2),
//               phi = proj (proj|dpfp), nu = 1. Minimum budget as `linear`.
// Source:       Schlag, Irie & Schmidhuber 2021, "Linear Transformers Are
//               Secretly Fast Weight Programmers" (ICML), §4.1; Widrow & Hoff 1960.
//
// State layout: M row-major, state()[i * d_φ + j] = M(i, j).
#pragma once

#include "memories/feature_map.hpp"
#include "memories/memory.hpp"

namespace memcap {

class DeltaGrid final : public Memory {
public:
    DeltaGrid(const MemoryShape& shape, double beta, const std::string& phi, int nu, Rng& rng);

    void reset() override { grid_.setZero(); }
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return grid_.size(); }
    ConstStateView state() const override { return ConstStateView(grid_.data(), grid_.size()); }
    std::int64_t param_floats() const override { return phi_.param_floats(); }

    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    void read_batch(ConstMatRef queries, MatRef out) const override;

private:
    void features(ConstMatRef x, RowMat& f) const;  // φ, rows normalised
    float beta_;
    FeatureMap phi_;
    RowMat grid_;  // d_v × d_φ
};

}  // namespace memcap
