// memcap/memories/fox/fox_cache.cpp — see fox_cache.hpp.
#include "memories/fox/fox_cache.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace memcap {

FoxCache::FoxCache(const MemoryShape& shape, double beta, double forget, double threshold)
    : d_k_(shape.d_key), d_v_(shape.d_value), row_(shape.d_key + shape.d_value + 1), capacity_(capacity_at(shape)),
      beta_(static_cast<float>(beta)), log_f_(static_cast<float>(std::log(forget))),
      log_tau_(threshold > 0.0 ? static_cast<float>(std::log(threshold)) : -std::numeric_limits<float>::infinity()) {
    if (capacity_ > 0) rows_.reserve(static_cast<std::size_t>(capacity_ * row_));
}

void FoxCache::append(ConstVecRef key, ConstVecRef value, float log_f) {
    const std::size_t row = static_cast<std::size_t>(row_);
    // decay every held pair, then drop those the gate has forgotten below the threshold
    std::size_t kept = 0;
    for (std::size_t r = 0; r < rows_.size(); r += row) {
        float& c = rows_[r + row - 1];
        if (log_f != 0.0f) c += log_f;
        if (c < log_tau_) continue;
        if (kept != r) std::copy(rows_.begin() + static_cast<std::ptrdiff_t>(r), rows_.begin() + static_cast<std::ptrdiff_t>(r + row),
                                 rows_.begin() + static_cast<std::ptrdiff_t>(kept));
        kept += row;
    }
    rows_.resize(kept);
    if (capacity_ == 0) return;
    if (capacity_ > 0 && pairs() >= capacity_) {  // full: the most forgotten goes (the oldest of equals)
        std::size_t worst = 0;
        for (std::size_t r = row; r < rows_.size(); r += row)
            if (rows_[r + row - 1] < rows_[worst + row - 1]) worst = r;
        rows_.erase(rows_.begin() + static_cast<std::ptrdiff_t>(worst), rows_.begin() + static_cast<std::ptrdiff_t>(worst + row));
    }
    const std::size_t at = rows_.size();
    rows_.resize(at + row);
    for (int j = 0; j < d_k_; ++j) rows_[at + static_cast<std::size_t>(j)] = key(j);
    for (int j = 0; j < d_v_; ++j) rows_[at + static_cast<std::size_t>(d_k_ + j)] = value(j);
    rows_[at + row - 1] = 0.0f;
}

void FoxCache::write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) {
    if (gate.write_gate || gate.beta) throw std::invalid_argument("fox takes only a per-token forget gate (a decay)");
    if (gate.log_decay && gate.decay_channels != 1)
        throw std::invalid_argument("fox's forget gate is one scalar a token (a decay of one column)");
    append(key, value, gate.log_decay ? *gate.log_decay : log_f_);
}

void FoxCache::read(ConstVecRef query, VecRef out) const {
    out.setZero();
    const Eigen::Index n = pairs();
    if (n == 0) return;
    const Eigen::Map<const RowMat> rows(rows_.data(), n, row_);
    Eigen::VectorXf logits = beta_ * (rows.leftCols(d_k_) * query);
    logits += rows.col(row_ - 1);
    const float top = logits.maxCoeff();
    const Eigen::VectorXf w = (logits.array() - top).exp().matrix();
    out.noalias() = rows.middleCols(d_k_, d_v_).transpose() * w;
    out /= w.sum();
}

}  // namespace memcap
