// memcap/memories/linear/linear_grid.cpp — see linear_grid.hpp.
#include "memories/linear/linear_grid.hpp"

#include "core/simd.hpp"

#include <algorithm>

namespace memcap {

void LinearGrid::write(ConstVecRef key, ConstVecRef value) {
    thread_local RowMat f;  // (a write per token of the causal backward: no allocation each time)
    features_into(key.transpose(), f);
    grid_.noalias() += value * f;
}

void LinearGrid::write_batch(ConstMatRef keys, ConstMatRef values) {
    // Σ_i v_i φ(k_i)ᵀ added to the grid: on register tiles reading the values' columns in place
    // when d_φ is a multiple of 16 (core/simd.hpp), else as one GEMM; the keys themselves
    // when the feature map passes them through (no copy)
    RowMat mapped;
    if (!features_are_keys()) mapped = features(keys);
    const ConstMatRef f = features_are_keys() ? keys : ConstMatRef(mapped);
    if (f.cols() % simd::kLanes == 0 && f.cols() > 0)
        simd::add_transposed_product(values.data(), values.outerStride(), f.data(), f.outerStride(), f.rows(),
                                     grid_.data(), grid_.cols(), grid_.rows(), grid_.cols());
    else
        grid_.noalias() += values.transpose() * f;
}

void LinearGrid::causal(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates, MatRef out) {
    if (!gates.empty()) return causal_by_token(queries, keys, values, gates, out);  // refuses them
    require_causal_shapes(queries, keys, values, gates, out);
    const RowMat fq = features(queries), fk = features(keys);
    constexpr Eigen::Index kChunk = 64;
    RowMat scores;
    for (Eigen::Index start = 0; start < fk.rows(); start += kChunk) {
        const Eigen::Index c = std::min(kChunk, fk.rows() - start);
        const auto q = fq.middleRows(start, c), k = fk.middleRows(start, c);
        const auto v = values.middleRows(start, c);
        out.middleRows(start, c).noalias() = q * grid_.transpose();
        scores.noalias() = q * k.transpose();
        scores.triangularView<Eigen::StrictlyUpper>().setZero();
        out.middleRows(start, c).noalias() += scores * v;
        grid_.noalias() += v.transpose() * k;
    }
}

void LinearGrid::write_backward(ConstMatRef keys, ConstMatRef values, const RowMat& d_grid, MatRef d_keys) const {
    const RowMat d_f = values * d_grid;  // n × d_φ
    features_backward(keys, d_f, d_keys);
}

}  // namespace memcap
