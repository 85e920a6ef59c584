// memcap/memories/grid/unit_lower.hpp — the unit-lower-triangular solve of the chunked
// delta-rule writes (delta, and the gated grids' delta forms).
#pragma once

#include "core/types.hpp"

namespace memcap {

/// Solves (I + L) X = B in place (B becomes X), L the strictly lower part of the c × c
/// `lower` (its diagonal and upper part are not read), by forward substitution row by
/// row: x_i = b_i − Σ_{j<i} L_ij x_j, the sum in increasing j. Eigen's general
/// triangular solver took 16% of the native build's batched write at B = 4096 for
/// 5% of its arithmetic (perf of scripts/bench.sh's delta/write_batch); here each strip of one SIMD packet of B's columns (the width
/// the build vectorises with: 16 floats with AVX-512, 4 with SSE2) stays in a
/// register while it is eliminated, and the columns past the last full strip go
/// one at a time in the same order.
inline void solve_unit_lower(const RowMat& lower, RowMat& b) {
    constexpr int kWidth = Eigen::internal::packet_traits<float>::size;
    using Strip = Eigen::Matrix<float, 1, kWidth>;
    const Eigen::Index rows = b.rows(), cols = b.cols();
    Eigen::Index k = 0;
    for (; k + kWidth <= cols; k += kWidth)
        for (Eigen::Index i = 1; i < rows; ++i) {
            Strip x = b.row(i).segment<kWidth>(k);
            for (Eigen::Index j = 0; j < i; ++j) x -= lower(i, j) * b.row(j).segment<kWidth>(k);
            b.row(i).segment<kWidth>(k) = x;
        }
    for (; k < cols; ++k)
        for (Eigen::Index i = 1; i < rows; ++i) {
            float x = b(i, k);
            for (Eigen::Index j = 0; j < i; ++j) x -= lower(i, j) * b(j, k);
            b(i, k) = x;
        }
}


}  // namespace memcap
