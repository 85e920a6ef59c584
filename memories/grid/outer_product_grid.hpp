// memcap/memories/grid/outer_product_grid.hpp — what the three grid memories share.
//
// `linear`, `delta` and `selective` all hold one matrix M of d_v × d_φ floats
// (row-major: state()[i * d_φ + j] = M(i, j)), take keys through the same
// fixed feature map φ (feature_map.hpp; d_φ bought by the budget as below),
// and read M φ(q). They differ only in how they write, so a grid backend
// derives from OuterProductGrid and implements write / write_batch; reset,
// state, read and read_batch come from here. `normalise` makes φ(x) unit
// length on both write and read (the delta rule's reading).
#pragma once

#include "core/rng.hpp"
#include "memories/grid/feature_map.hpp"
#include "memories/memory.hpp"

#include <string>

namespace memcap {

class OuterProductGrid : public Memory {
public:
    /// φ's largest output dimension for a shape: floor(B / d_v); without a budget d_k, or for
    /// the Taylor map 1 + d_k + d_k(d_k + 1)/2 (its natural size: y = k, no projection).
    static std::int64_t feature_budget(const MemoryShape& shape, const std::string& phi) {
        if (shape.budget_floats) return *shape.budget_floats / shape.d_value;
        const std::int64_t d = shape.d_key;
        return phi == "taylor" ? 1 + d + d * (d + 1) / 2 : d;
    }
    /// A grid's dimensions at a shape: its one sizing function (linear, delta and
    /// selective), used by the constructor (through φ's), the table's cost models and
    /// minimum budget, and `memcap list`.
    struct Dims {
        FeatureMap::Dims phi;     // φ: d_φ = phi.dim
        std::int64_t d_value;     // rows of the grid
        std::int64_t min_budget;  // φ's smallest dimension × d_v
        std::int64_t state_floats() const { return d_value * phi.dim; }
    };
    static Dims size(const MemoryShape& shape, const std::string& phi, int nu) {
        return {FeatureMap::size(phi, shape.d_key, feature_budget(shape, phi), nu), shape.d_value,
                FeatureMap::min_dim(phi, nu) * shape.d_value};
    }

    void reset() override { grid_.setZero(); }
    std::int64_t state_floats() const override { return grid_.size(); }
    ConstStateView state() const override { return ConstStateView(grid_.data(), grid_.size()); }
    StateRef mutable_state() override { return StateRef(grid_.data(), grid_.size()); }
    std::int64_t param_floats() const override { return phi_.param_floats(); }

    void read(ConstVecRef query, VecRef out) const override {
        const RowMat f = features(query.transpose());
        out.noalias() = grid_ * f.transpose();
    }
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override {
        require_no_hidden(options);
        if (features_are_keys()) {  // the same product, without a copy of the queries
            out.noalias() = queries * grid_.transpose();
            return;
        }
        const RowMat f = features(queries);
        out.noalias() = f * grid_.transpose();
    }

    /// Memory::backward for every grid: the read's part (R = φ(Q) Mᵀ) is here, the
    /// write's part is each grid's write_backward; φ's (and its normalisation's) backward
    /// is features_backward.
    void backward(ConstMatRef keys, ConstMatRef values, ConstMatRef queries, ConstMatRef d_reads, MatRef d_keys,
                  MatRef d_queries) const override {
        const RowMat fq = features(queries);
        const RowMat d_fq = d_reads * grid_;               // m × d_φ
        const RowMat d_grid = d_reads.transpose() * fq;    // d_v × d_φ: ∂L/∂M of the final state
        features_backward(queries, d_fq, d_queries);
        write_backward(keys, values, d_grid, d_keys);
    }

protected:
    /// The write's part of backward: given ∂L/∂M of the state write_batch(keys, values)
    /// left (from M = 0 after reset), writes ∂L/∂keys. Grids without a backward pass
    /// (none today) would throw std::logic_error.
    virtual void write_backward(ConstMatRef keys, ConstMatRef values, const RowMat& d_grid, MatRef d_keys) const = 0;

    /// The backward pass of features(x): d_x from d_f = ∂L/∂features(x).
    void features_backward(ConstMatRef x, ConstMatRef d_f, MatRef d_x) const {
        if (!normalise_) return phi_.backward(x, d_f, d_x);
        RowMat raw(x.rows(), phi_.dim());
        phi_.apply(x, raw);
        phi_.backward(x, unit_rows_backward(raw, d_f), d_x);
    }

    OuterProductGrid(const MemoryShape& shape, const std::string& phi, int nu, bool normalise, Rng& rng,
                     double taylor_scale = 1.0)
        : phi_(phi, shape.d_key, feature_budget(shape, phi), nu, rng, taylor_scale), normalise_(normalise),
          grid_(RowMat::Zero(shape.d_value, phi_.dim())) {}

    /// Whether features(x) is x itself (φ passes keys through, rows not normalised).
    bool features_are_keys() const { return !normalise_ && phi_.passes_through(); }

    /// φ of every row of x (n × d_k → n × d_φ), rows normalised when asked.
    RowMat features(ConstMatRef x) const {
        RowMat f(x.rows(), phi_.dim());
        phi_.apply(x, f);
        if (normalise_) normalise_rows(f);
        return f;
    }

    FeatureMap phi_;
    bool normalise_;
    RowMat grid_;  // d_v × d_φ
};

}  // namespace memcap
