// memcap/memories/linear_grid.hpp — linear-attention / fast-weight outer-product grid.
//
// Stores:       one grid M of d_v × d_φ floats (M = 0 after reset).
// Write:        M += v φ(k)ᵀ.
// Read:         M φ(q).
// state_floats: d_v × d_φ, d_φ = floor(B / d_v) (proj) or 2ν·floor(B / (2ν d_v))
//               (dpfp); without a budget d_φ = d_k, the essays' d × d grid.
// Parameters:   phi = proj (proj|dpfp), nu = 1 (DPFP's ν). φ is the identity
//               when d_φ = d_k; see feature_map.hpp. Minimum budget: d_v (proj),
//               2ν·d_v (dpfp).
// Source:       Katharopoulos et al. 2020 ("Transformers are RNNs"); Schlag,
//               Irie & Schmidhuber 2021 (fast weights); essay 004 Part 3.
//
// State layout: M row-major, so state()[i * d_φ + j] = M(i, j).
#pragma once

#include "memories/feature_map.hpp"
#include "memories/memory.hpp"

namespace memcap {

class LinearGrid final : public Memory {
public:
    LinearGrid(const MemoryShape& shape, const std::string& phi, int nu, Rng& rng);

    void reset() override { grid_.setZero(); }
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return grid_.size(); }
    ConstStateView state() const override { return ConstStateView(grid_.data(), grid_.size()); }
    std::int64_t param_floats() const override { return phi_.param_floats(); }

    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    void read_batch(ConstMatRef queries, MatRef out) const override;

    /// φ's output dimension given a shape (what the budget buys).
    static std::int64_t feature_budget(const MemoryShape& shape) {
        return shape.budget_floats ? *shape.budget_floats / shape.d_value : shape.d_key;
    }

private:
    FeatureMap phi_;
    RowMat grid_;  // d_v × d_φ
};

}  // namespace memcap
