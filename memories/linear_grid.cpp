// memcap/memories/linear_grid.cpp — see linear_grid.hpp.
#include "memories/linear_grid.hpp"

namespace memcap {

LinearGrid::LinearGrid(const MemoryShape& shape, const std::string& phi, int nu, Rng& rng)
    : phi_(phi, shape.d_key, feature_budget(shape), nu, rng), grid_(RowMat::Zero(shape.d_value, phi_.dim())) {}

void LinearGrid::write(ConstVecRef key, ConstVecRef value) {
    RowMat f(1, phi_.dim());
    phi_.apply(key.transpose(), f);
    grid_.noalias() += value * f;
}

void LinearGrid::write_batch(ConstMatRef keys, ConstMatRef values) {
    RowMat f(keys.rows(), phi_.dim());
    phi_.apply(keys, f);
    grid_.noalias() += values.transpose() * f;  // Σ_i v_i φ(k_i)ᵀ as one GEMM
}

void LinearGrid::read(ConstVecRef query, VecRef out) const {
    RowMat f(1, phi_.dim());
    phi_.apply(query.transpose(), f);
    out.noalias() = grid_ * f.transpose();
}

void LinearGrid::read_batch(ConstMatRef queries, MatRef out) const {
    RowMat f(queries.rows(), phi_.dim());
    phi_.apply(queries, f);
    out.noalias() = f * grid_.transpose();
}

}  // namespace memcap
