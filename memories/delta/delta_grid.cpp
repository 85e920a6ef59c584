// memcap/memories/delta/delta_grid.cpp — see delta_grid.hpp.
#include "memories/delta/delta_grid.hpp"

#include "core/simd.hpp"

#include <algorithm>
#include <cstring>

namespace memcap {

void DeltaGrid::write(ConstVecRef key, ConstVecRef value) { write_gated(key, value, TokenGate{}); }  // β = the rule's

void DeltaGrid::write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) {
    if (gate.log_decay || gate.write_gate)
        throw std::invalid_argument("the delta rule takes only a per-token write strength beta (no decay, no write gate)");
    const float beta = gate.beta ? *gate.beta : beta_;
    thread_local RowMat f;  // (a write per token: no allocation each time)
    thread_local Vec err;
    features_into(key.transpose(), f);
    err.noalias() = grid_ * f.transpose();
    err = value - err;
    grid_.noalias() += (beta * err) * f;
}

OuterProductGrid::WriteStep DeltaGrid::write_step(ConstVecRef, const TokenGate& gate) const {
    WriteStep s;
    s.delta = true;
    s.b = gate.beta ? *gate.beta : beta_;
    s.db_dbeta = 1.0f;
    return s;
}

void DeltaGrid::write_batch(ConstMatRef keys, ConstMatRef values) {
    // The delta rule is sequential — each write sees the grid left by the previous
    // one — but a chunk of C writes can be done with matrix products (the "UT" form of
    // Yang et al. 2024, exact algebra). From the grid M at the chunk's start, the
    // updates u_i = β(v_i − M_{i−1} φ_i), M_i = M_{i−1} + u_i φ_iᵀ, satisfy
    //     u_i = β(v_i − M φ_i) − β Σ_{j<i} (φ_j·φ_i) u_j,
    // i.e. (I + β L) U = β(V − Φ Mᵀ) with L the strictly lower part of Φ Φᵀ; then
    // M += Uᵀ Φ. Per chunk: two products over the whole grid, a C × C Gram matrix and a
    // unit-triangular solve, instead of C matrix-vector products over the whole grid.
    write_chunks(features(keys), values, grid_, nullptr);
}

void DeltaGrid::write_chunks(const RowMat& f, ConstMatRef values, RowMat& grid, RowMat* updates) const {
    // The two products run on register tiles (core/simd.hpp) over Mᵀ held d_φ × W, W = d_v
    // rounded up to 16 columns (zero past d_v, and so zero throughout): Φ Mᵀ reads Mᵀ's
    // rows as they lie, and Mᵀ += Φᵀ U adds to them in place, so neither product packs or
    // copies the grid per chunk as a general GEMM does (measured: 1.7× the arithmetic's
    // share with Eigen's GEMMs on 16-row chunks, docs/performance.md). Each entry is one
    // madd chain in index order: (Φ Mᵀ)_ia = Σ_k φ_ik M_ak from 0, and the new
    // M_ak = M_ak + Σ_i φ_ik u_ia starting from the old entry.
    //
    // C = 16 (a chunk's rows): the triangular work grows as C² and the passes over the
    // grid as n / C; 16 was the fastest of 8 to 64 in both builds measured with Eigen's
    // GEMMs, and the kernel keeps it.
    constexpr Eigen::Index kChunk = 16;
    const Eigen::Index n = f.rows(), d_phi = f.cols(), d_v = values.cols();
    const Eigen::Index width = (d_v + simd::kLanes - 1) / simd::kLanes * simd::kLanes, vectors = width / simd::kLanes;
    if (updates) updates->resize(n, d_v);
    if (n == 0) return;
    // the workspace, kept by the thread from call to call: no allocation per episode
    thread_local RowMat g, u, p, lower, phi_t;
    g.resize(d_phi, width), p.resize(kChunk, width), lower.resize(kChunk, kChunk), phi_t.setZero(d_phi, kChunk);
    u.resize(std::min(kChunk, n), width);
    u.rightCols(width - d_v).setZero();
    // A grid just reset (M = 0) is not read: the first chunk's Φ Mᵀ is then +0 in every
    // entry (for finite φ each chain fma(φ, +0, ·) from +0 stays +0), so U = βV, and its Mᵀ += Φᵀ U
    // starts from +0, which a chain from 0 does — the same bits without touching Mᵀ.
    bool zero = simd::all_zero(grid.data(), grid.size());
    if (!zero) simd::transpose(grid.data(), d_v, d_phi, d_phi, g.data(), width), g.rightCols(width - d_v).setZero();
    const float beta = beta_;
    for (Eigen::Index start = 0; start < n; start += kChunk) {
        const Eigen::Index c = std::min(kChunk, n - start);
        if (u.rows() != c) u.resize(c, width), u.rightCols(width - d_v).setZero();
        // U = β(V − Φ Mᵀ): (v − p) · β entry by entry, in one pass (the padding columns stay 0)
        if (!zero) {
            simd::product(f.row(start).data(), d_phi, g.data(), width, d_phi, p.data(), width, c, width);  // Φ Mᵀ
            u.leftCols(d_v) = (values.middleRows(start, c) - p.topLeftCorner(c, d_v)) * beta;
        } else {
            u.leftCols(d_v) = values.middleRows(start, c) * beta;
        }
        // (I + β L) U ← U, L the strictly lower part of Φ Φᵀ: forward substitution, row
        // by row, u_i ← u_i − Σ_{j<i} (β φ_i·φ_j) u_j in increasing j (solve_unit_lower's
        // order), up to four vectors of the row at once so their chains overlap (each
        // vector's chains are its own: the same bits however many go together)
        simd::transpose(f.row(start).data(), c, d_phi, d_phi, phi_t.data(), kChunk);  // Φᵀ (columns past c unused)
        simd::product(f.row(start).data(), d_phi, phi_t.data(), kChunk, d_phi, lower.data(), kChunk, c, kChunk);  // Φ Φᵀ
        lower.topRows(c) *= beta;
        const auto substitute = [&](auto V_, std::int64_t v0) {
            constexpr int V = decltype(V_)::value;
            for (Eigen::Index i = 1; i < c; ++i) {
                float* row = u.row(i).data() + v0 * simd::kLanes;
                simd::Floats x[V];
                for (int v = 0; v < V; ++v) x[v] = simd::load(row + v * simd::kLanes);
                for (Eigen::Index j = 0; j < i; ++j) {
                    const simd::Floats l = simd::broadcast(lower(i, j));
                    const float* prior = u.row(j).data() + v0 * simd::kLanes;
                    for (int v = 0; v < V; ++v) x[v] = x[v] - l * simd::load(prior + v * simd::kLanes);
                }
                for (int v = 0; v < V; ++v) simd::store(row + v * simd::kLanes, x[v]);
            }
        };
        std::int64_t v0 = 0;
        for (; v0 + 4 <= vectors; v0 += 4) substitute(std::integral_constant<int, 4>{}, v0);
        simd::with_count<3>(vectors - v0, [&](auto V) { substitute(V, v0); });
        // Mᵀ += Φᵀ U
        simd::add_transposed_product(f.row(start).data(), d_phi, u.data(), width, c, g.data(), width, d_phi, width, !zero);
        if (updates) updates->middleRows(start, c) = u.leftCols(d_v);
        zero = false;
    }
    simd::transpose(g.data(), d_phi, d_v, width, grid.data(), d_phi);
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
