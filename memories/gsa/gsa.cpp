// memcap/memories/gsa/gsa.cpp — see gsa.hpp.
#include "memories/gsa/gsa.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace memcap {

std::int64_t GatedSlots::slots(const MemoryShape& s) {
    return s.budget_floats ? *s.budget_floats / (std::int64_t{s.d_key} + s.d_value) : std::int64_t{s.d_key};
}

GatedSlots::GatedSlots(const MemoryShape& shape, double beta, double write, double temp, int topk, Rng& params)
    : dk_(shape.d_key), dv_(shape.d_value), m_(static_cast<Eigen::Index>(slots(shape))), beta_(static_cast<float>(beta)),
      write_(static_cast<float>(write)), temp_(static_cast<float>(temp)), topk_(topk), router_(m_, shape.d_key),
      state_(Vec::Zero(m_ * (dk_ + dv_))), scores_(m_), route_(m_) {
    params.fill_normal(router_);
    normalise_rows(router_);
}

void GatedSlots::reset() { state_.setZero(); }

void GatedSlots::route(ConstVecRef key) {
    const Vec s = router_ * key;
    route_.setZero();
    // the slots written: every slot, or the top k by score (ties to the lower index)
    std::vector<Eigen::Index> idx(static_cast<std::size_t>(m_));
    std::iota(idx.begin(), idx.end(), Eigen::Index{0});
    const std::size_t k = topk_ > 0 ? std::min<std::size_t>(static_cast<std::size_t>(topk_), idx.size()) : idx.size();
    std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                      [&](Eigen::Index a, Eigen::Index b) { return s(a) > s(b) || (s(a) == s(b) && a < b); });
    if (std::isinf(temp_)) {  // the hash: the nearest direction alone
        route_(idx[0]) = 1.0f;
        return;
    }
    const float top = s(idx[0]);
    float sum = 0.0f;
    for (std::size_t j = 0; j < k; ++j) sum += route_(idx[j]) = std::exp(temp_ * (s(idx[j]) - top));
    for (std::size_t j = 0; j < k; ++j) route_(idx[j]) /= sum;
}

void GatedSlots::write(ConstVecRef key, ConstVecRef value) {
    route(key);
    Eigen::Map<RowMat> keys(state_.data(), m_, dk_), values(state_.data() + m_ * dk_, m_, dv_);
    for (Eigen::Index i = 0; i < m_; ++i) {
        const float a = write_ * route_(i);  // 1 − α_t,i
        if (a == 0.0f) continue;             // a slot not written is left exactly as it was
        keys.row(i) = (1.0f - a) * keys.row(i) + a * key.transpose();
        values.row(i) = (1.0f - a) * values.row(i) + a * value.transpose();
    }
}

void GatedSlots::read(ConstVecRef query, VecRef out) const {
    Eigen::Map<const RowMat> keys(state_.data(), m_, dk_), values(state_.data() + m_ * dk_, m_, dv_);
    scores_ = keys * query;
    if (std::isinf(beta_)) {  // the hard limit: the slots tied at the top share the weight
        const float top = scores_.maxCoeff();
        Vec w = (scores_.array() == top).cast<float>().matrix();
        out = values.transpose() * (w / w.sum());
        return;
    }
    scores_ *= beta_;
    const float top = scores_.maxCoeff();
    const Vec w = (scores_.array() - top).exp().matrix();
    out = values.transpose() * (w / w.sum());
}

}  // namespace memcap
