// memcap/memories/delta_grid.cpp — see delta_grid.hpp.
#include "memories/delta_grid.hpp"

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
    const RowMat f = features(keys);
    constexpr Eigen::Index kChunk = 16;  // fastest of 8, 16, 32, 64 in the default build (scripts/bench.sh)
    RowMat u, gram;
    for (Eigen::Index start = 0; start < f.rows(); start += kChunk) {
        const Eigen::Index c = std::min(kChunk, f.rows() - start);
        const auto phi = f.middleRows(start, c);  // c × d_φ
        u = values.middleRows(start, c);           // c × d_v
        u.noalias() -= phi * grid_.transpose();    // V − Φ Mᵀ
        u *= beta_;
        gram.noalias() = phi * phi.transpose();
        gram *= beta_;                             // β Φ Φᵀ: only its strictly lower part is used
        gram.triangularView<Eigen::UnitLower>().solveInPlace(u);
        grid_.noalias() += u.transpose() * phi;
    }
}

}  // namespace memcap
