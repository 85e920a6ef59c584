// memcap/memories/comba/comba_grid.cpp — see comba_grid.hpp.
#include "memories/comba/comba_grid.hpp"

#include <cmath>
#include <stdexcept>

namespace memcap {

void CombaGrid::step(ConstVecRef key, ConstVecRef value, float alpha, float beta) {
    const RowMat f = features(key.transpose());
    const RowMat p = removal_ * f;
    const Vec err = value - grid_ * p.transpose();  // from the state before the decay
    if (alpha != 1.0f) grid_ *= alpha;
    grid_.noalias() += (beta * err) * f;
}

void CombaGrid::write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) {
    if (gate.write_gate) throw std::invalid_argument("comba takes a per-token decay and beta, no write gate");
    if (gate.log_decay && gate.decay_channels != 1)
        throw std::invalid_argument("comba's decay is one scalar a token (a decay of one column)");
    step(key, value, gate.log_decay ? std::exp(*gate.log_decay) : alpha_, gate.beta ? *gate.beta : beta_);
}

}  // namespace memcap
