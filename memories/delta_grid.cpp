// memcap/memories/delta_grid.cpp — see delta_grid.hpp.
#include "memories/delta_grid.hpp"

#include "memories/linear_grid.hpp"

namespace memcap {

DeltaGrid::DeltaGrid(const MemoryShape& shape, double beta, const std::string& phi, int nu, Rng& rng)
    : beta_(static_cast<float>(beta)), phi_(phi, shape.d_key, LinearGrid::feature_budget(shape), nu, rng),
      grid_(RowMat::Zero(shape.d_value, phi_.dim())) {}

void DeltaGrid::features(ConstMatRef x, RowMat& f) const {
    f.resize(x.rows(), phi_.dim());
    phi_.apply(x, f);
    normalise_rows(f);
}

void DeltaGrid::write(ConstVecRef key, ConstVecRef value) {
    RowMat f;
    features(key.transpose(), f);
    const Vec err = value - grid_ * f.transpose();
    grid_.noalias() += (beta_ * err) * f;
}

void DeltaGrid::write_batch(ConstMatRef keys, ConstMatRef values) {
    // The delta rule is sequential: each write sees the grid left by the previous one.
    RowMat f;
    features(keys, f);
    Vec err(grid_.rows());
    for (Eigen::Index i = 0; i < keys.rows(); ++i) {
        err.noalias() = values.row(i).transpose() - grid_ * f.row(i).transpose();
        grid_.noalias() += (beta_ * err) * f.row(i);
    }
}

void DeltaGrid::read(ConstVecRef query, VecRef out) const {
    RowMat f;
    features(query.transpose(), f);
    out.noalias() = grid_ * f.transpose();
}

void DeltaGrid::read_batch(ConstMatRef queries, MatRef out) const {
    RowMat f;
    features(queries, f);
    out.noalias() = f * grid_.transpose();
}

}  // namespace memcap
