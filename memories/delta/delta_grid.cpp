// memcap/memories/delta/delta_grid.cpp — see delta_grid.hpp.
#include "memories/delta/delta_grid.hpp"

#include "memories/grid/unit_lower.hpp"

#include <algorithm>

namespace memcap {

void DeltaGrid::write(ConstVecRef key, ConstVecRef value) {
    const RowMat f = features(key.transpose());
    const Vec err = value - grid_ * f.transpose();
    grid_.noalias() += (beta_ * err) * f;
}

void DeltaGrid::write_batch(ConstMatRef keys, ConstMatRef values) {
    // The delta rule is sequential — each write sees the grid left by the previous
    // one — but a chunk of C writes can be done with matrix products (the "UT" form of
    // Yang et al. 2024, exact algebra). From the grid M at the chunk's start, the
    // updates u_i = β(v_i − M_{i−1} φ_i), M_i = M_{i−1} + u_i φ_iᵀ, satisfy
    //     u_i = β(v_i − M φ_i) − β Σ_{j<i} (φ_j·φ_i) u_j,
    // i.e. (I + β L) U = β(V − Φ Mᵀ) with L the strictly lower part of Φ Φᵀ; then
    // M += Uᵀ Φ. Per chunk: three GEMMs and a C × C unit-triangular solve, instead of C
    // matrix-vector products over the whole grid.
    //
    // C = 16 is the fastest chunk in both builds measured: of C = 8, 16, 32, 64 in the
    // baseline x86-64 build (SSE2), and of C = 8 to 64 in the native AVX-512 build, with
    // Eigen's solver and with the forward substitution below (docs/performance.md). The best
    // C did not move with the vector width, so it stays a constant; the forward
    // substitution takes its width from the build.
    write_chunks(features(keys), values, grid_, nullptr);
}

void DeltaGrid::write_chunks(const RowMat& f, ConstMatRef values, RowMat& grid, RowMat* updates) const {
    if (updates) updates->resize(f.rows(), values.cols());
    constexpr Eigen::Index kChunk = 16;
    RowMat u, gram;
    for (Eigen::Index start = 0; start < f.rows(); start += kChunk) {
        const Eigen::Index c = std::min(kChunk, f.rows() - start);
        const auto phi = f.middleRows(start, c);  // c × d_φ
        u = values.middleRows(start, c);           // c × d_v
        u.noalias() -= phi * grid.transpose();    // V − Φ Mᵀ
        u *= beta_;
        gram.noalias() = phi * phi.transpose();
        gram *= beta_;                             // β Φ Φᵀ: only its strictly lower part is used
        solve_unit_lower(gram, u);
        grid.noalias() += u.transpose() * phi;
        if (updates) updates->middleRows(start, c) = u;
    }
}

void DeltaGrid::write_backward(ConstMatRef keys, ConstMatRef values, const RowMat& d_grid, MatRef d_keys) const {
    const RowMat f = features(keys);
    RowMat grid = RowMat::Zero(grid_.rows(), grid_.cols()), u;
    write_chunks(f, values, grid, &u);  // grid = M_n, u_t = the updates
    RowMat g = d_grid, d_f(f.rows(), f.cols());
    Vec d_u;
    for (Eigen::Index t = f.rows() - 1; t >= 0; --t) {
        const auto phi = f.row(t);
        grid.noalias() -= u.row(t).transpose() * phi;  // M_{t−1}
        d_u.noalias() = g * phi.transpose();            // ∂L/∂u_t
        d_f.row(t).noalias() = u.row(t) * g;            // through M_t = M_{t−1} + u_t φ_tᵀ
        d_f.row(t).noalias() -= beta_ * (d_u.transpose() * grid);  // through u_t = β(v_t − M_{t−1} φ_t)
        g.noalias() -= (beta_ * d_u) * phi;
    }
    features_backward(keys, d_f, d_keys);
}

}  // namespace memcap
