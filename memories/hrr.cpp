// memcap/memories/hrr.cpp — see hrr.hpp.
#include "memories/hrr.hpp"

#include <cmath>

namespace memcap {

Hrr::Hrr(const MemoryShape& shape, Rng& rng)
    : dim_(static_cast<int>(shape.budget_floats.value_or(shape.d_key))), fft_(dim_), trace_(Vec::Zero(dim_)) {
    const double sd = 1.0 / std::sqrt(static_cast<double>(dim_));
    if (dim_ != shape.d_key) {
        key_map_.resize(dim_, shape.d_key);
        rng.fill_normal(key_map_, sd);
    }
    if (dim_ != shape.d_value) {
        value_map_.resize(dim_, shape.d_value);
        rng.fill_normal(value_map_, sd);
    }
}

RowMat Hrr::map_in(ConstMatRef x, const RowMat& map) const {
    if (map.size() == 0) return x;
    return x * map.transpose();
}

void Hrr::write(ConstVecRef key, ConstVecRef value) { write_batch(key.transpose(), value.transpose()); }

void Hrr::write_batch(ConstMatRef keys, ConstMatRef values) {
    const RowMat k = map_in(keys, key_map_), v = map_in(values, value_map_);
    const int bins = fft_.bins();
    Spectrum fk(static_cast<std::size_t>(bins)), fv(fk.size()), sum(fk.size(), {0.0f, 0.0f});
    for (Eigen::Index i = 0; i < k.rows(); ++i) {  // Σ_i F k_i · F v_i, then one inverse FFT
        fft_.forward(k.row(i).data(), fk.data());
        fft_.forward(v.row(i).data(), fv.data());
        for (int b = 0; b < bins; ++b) sum[static_cast<std::size_t>(b)] += fk[static_cast<std::size_t>(b)] * fv[static_cast<std::size_t>(b)];
    }
    Vec bound(dim_);
    fft_.inverse(sum.data(), bound.data());
    trace_ += bound / static_cast<float>(dim_);
}

void Hrr::read(ConstVecRef query, VecRef out) const {
    RowMat o(1, out.size());
    read_batch(query.transpose(), o);
    out = o.row(0).transpose();
}

void Hrr::read_batch(ConstMatRef queries, MatRef out) const {
    const RowMat q = map_in(queries, key_map_);
    const int bins = fft_.bins();
    Spectrum ft(static_cast<std::size_t>(bins)), fq(ft.size());
    fft_.forward(trace_.data(), ft.data());
    RowMat r(q.rows(), dim_);
    for (Eigen::Index i = 0; i < q.rows(); ++i) {
        fft_.forward(q.row(i).data(), fq.data());
        for (int b = 0; b < bins; ++b) fq[static_cast<std::size_t>(b)] = std::conj(fq[static_cast<std::size_t>(b)]) * ft[static_cast<std::size_t>(b)];
        fft_.inverse(fq.data(), r.row(i).data());
    }
    r /= static_cast<float>(dim_);
    if (value_map_.size() == 0) out = r;
    else out.noalias() = r * value_map_;  // P_vᵀ applied to each row
}

}  // namespace memcap
