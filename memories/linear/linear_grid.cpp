// memcap/memories/linear/linear_grid.cpp — see linear_grid.hpp.
#include "memories/linear/linear_grid.hpp"

namespace memcap {

void LinearGrid::write(ConstVecRef key, ConstVecRef value) {
    const RowMat f = features(key.transpose());
    grid_.noalias() += value * f;
}

void LinearGrid::write_batch(ConstMatRef keys, ConstMatRef values) {
    if (features_are_keys()) {  // the same product, without a copy of the keys
        grid_.noalias() += values.transpose() * keys;
        return;
    }
    const RowMat f = features(keys);
    grid_.noalias() += values.transpose() * f;  // Σ_i v_i φ(k_i)ᵀ as one GEMM
}

void LinearGrid::write_backward(ConstMatRef keys, ConstMatRef values, const RowMat& d_grid, MatRef d_keys) const {
    const RowMat d_f = values * d_grid;  // n × d_φ
    features_backward(keys, d_f, d_keys);
}

}  // namespace memcap
