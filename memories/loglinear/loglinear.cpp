// memcap/memories/loglinear/loglinear.cpp — see loglinear.hpp.
#include "memories/loglinear/loglinear.hpp"

#include "core/simd.hpp"
#include "memories/grid/outer_product_grid.hpp"

#include <algorithm>
#include <cmath>

namespace memcap {

namespace {

/// One level's shape: the budget less the counter, divided equally among the levels.
MemoryShape level_shape(const MemoryShape& shape, int levels) {
    MemoryShape s = shape;
    if (shape.budget_floats)
        s.budget_floats = std::max<std::int64_t>(0, *shape.budget_floats - (levels >= 2 ? 1 : 0)) / levels;
    return s;
}

}  // namespace

LogLinear::Dims LogLinear::size(const MemoryShape& shape, const std::string& phi, int nu, int levels) {
    Dims d;
    const MemoryShape s = level_shape(shape, levels);
    d.phi = FeatureMap::size(phi, shape.d_key, OuterProductGrid::feature_budget(s, phi), nu);
    d.levels = levels;
    d.d_value = shape.d_value;
    d.min_budget = levels * FeatureMap::min_dim(phi, nu) * shape.d_value + d.counter();
    return d;
}

LogLinear::LogLinear(const MemoryShape& shape, const std::string& phi, int nu, int levels, double ratio, Rng& rng)
    // φ drawn exactly as the linear grid draws it at one level's budget (so L = 1 is `linear`)
    : phi_(phi, shape.d_key, OuterProductGrid::feature_budget(level_shape(shape, levels), phi), nu, rng),
      dv_(shape.d_value), levels_(levels), ratio_(static_cast<float>(ratio)), level_floats_(dv_ * phi_.dim()),
      state_(Vec::Zero(levels * level_floats_ + (levels >= 2 ? 1 : 0))) {}

void LogLinear::carry() {
    const std::int64_t period = std::int64_t{1} << (levels_ - 1);
    float& counter = state_(state_.size() - 1);
    const std::int64_t c = std::clamp<std::int64_t>(std::llround(counter), 0, period - 1);
    int target = levels_ - 1;
    if (c != 0) {
        int ctz = 0;
        while (((c >> ctz) & 1) == 0) ++ctz;
        target = std::min(ctz + 1, levels_ - 1);
    }
    Grid top = level(target);
    for (int l = 0; l < target; ++l) {
        Grid low = level(l);
        top += low;
        low.setZero();
    }
    counter = static_cast<float>((c + 1) % period);
}

void LogLinear::write(ConstVecRef key, ConstVecRef value) {
    const RowMat f = features(key.transpose());
    if (levels_ >= 2) carry();
    level(0).noalias() += value * f;
}

void LogLinear::write_batch(ConstMatRef keys, ConstMatRef values) {
    const bool keys_are_features = phi_.passes_through();
    RowMat mapped;
    if (!keys_are_features) mapped = features(keys);
    const ConstMatRef f = keys_are_features ? keys : ConstMatRef(mapped);
    if (levels_ == 1) {  // the linear grid's batched write (memories/linear/), bit for bit
        Grid g = level(0);
        if (f.cols() % simd::kLanes == 0 && f.cols() > 0)
            simd::add_transposed_product(values.data(), values.outerStride(), f.data(), f.outerStride(), f.rows(),
                                         g.data(), g.cols(), g.rows(), g.cols());
        else
            g.noalias() += values.transpose() * f;
        return;
    }
    for (Eigen::Index i = 0; i < f.rows(); ++i) {
        carry();
        level(0).noalias() += values.row(i).transpose() * f.row(i);
    }
}

RowMat LogLinear::weighted() const {
    RowMat sum = level(0);
    float w = 1.0f;
    for (int l = 1; l < levels_; ++l) {
        w *= ratio_;
        sum.noalias() += w * level(l);
    }
    return sum;
}

void LogLinear::read(ConstVecRef query, VecRef out) const {
    const RowMat f = features(query.transpose());
    if (levels_ == 1) {
        out.noalias() = level(0) * f.transpose();
        return;
    }
    out.noalias() = weighted() * f.transpose();
}

void LogLinear::read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options) const {
    require_no_hidden(options);
    if (levels_ == 1) {  // the linear grid's read (OuterProductGrid::read_batch), bit for bit
        if (phi_.passes_through()) {
            out.noalias() = queries * level(0).transpose();
            return;
        }
        const RowMat f = features(queries);
        out.noalias() = f * level(0).transpose();
        return;
    }
    const RowMat m = weighted();
    if (phi_.passes_through()) {
        out.noalias() = queries * m.transpose();
        return;
    }
    const RowMat f = features(queries);
    out.noalias() = f * m.transpose();
}

}  // namespace memcap
