// memcap/memories/delta_grid.cpp — see delta_grid.hpp.
#include "memories/delta_grid.hpp"

namespace memcap {

void DeltaGrid::write(ConstVecRef key, ConstVecRef value) {
    const RowMat f = features(key.transpose());
    const Vec err = value - grid_ * f.transpose();
    grid_.noalias() += (beta_ * err) * f;
}

void DeltaGrid::write_batch(ConstMatRef keys, ConstMatRef values) {
    // The delta rule is sequential: each write sees the grid left by the previous one.
    const RowMat f = features(keys);
    Vec err(grid_.rows());
    for (Eigen::Index i = 0; i < keys.rows(); ++i) {
        err.noalias() = values.row(i).transpose() - grid_ * f.row(i).transpose();
        grid_.noalias() += (beta_ * err) * f.row(i);
    }
}

}  // namespace memcap
