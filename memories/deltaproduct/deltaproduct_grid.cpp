// memcap/memories/deltaproduct/deltaproduct_grid.cpp — see deltaproduct_grid.hpp.
#include "memories/deltaproduct/deltaproduct_grid.hpp"

#include <cmath>
#include <stdexcept>

namespace memcap {

void DeltaProductGrid::step(ConstVecRef key, ConstVecRef value, float alpha, float beta) {
    const RowMat f = features(key.transpose());
    if (alpha != 1.0f) grid_ *= alpha;
    for (int j = 0; j < steps_; ++j) {  // DeltaGrid::write's arithmetic, n_h times
        const Vec err = value - grid_ * f.transpose();
        grid_.noalias() += (beta * err) * f;
    }
}

void DeltaProductGrid::write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) {
    if (gate.write_gate) throw std::invalid_argument("deltaproduct takes a per-token decay and beta, no write gate");
    if (gate.log_decay && gate.decay_channels != 1)
        throw std::invalid_argument("deltaproduct's decay is one scalar a token (a decay of one column)");
    step(key, value, gate.log_decay ? std::exp(*gate.log_decay) : alpha_, gate.beta ? *gate.beta : beta_);
}

}  // namespace memcap
