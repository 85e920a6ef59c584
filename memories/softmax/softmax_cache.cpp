// memcap/memories/softmax/softmax_cache.cpp — see softmax_cache.hpp.
#include "memories/softmax/softmax_cache.hpp"

#include "core/rng.hpp"
#include "core/simd.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace memcap {

namespace {

/// Whether the rows of `m` hold the same bits as the rows at `data`, `stride` floats apart.
bool same_rows(const RowMat& m, const float* data, Eigen::Index stride) {
    const auto bytes = static_cast<std::size_t>(m.cols()) * sizeof(float);
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        if (std::memcmp(m.row(i).data(), data + i * stride, bytes) != 0) return false;
    return true;
}

}  // namespace

std::uint64_t SoftmaxCache::fingerprint(ConstMatRef queries, const CacheMap& cache) const {
    // The shape and the corner entries of the queries and of the stored keys: enough to
    // tell a repeating read from a fresh one (a false match only costs one copy).
    const Eigen::Index q = queries.rows() - 1, k = cache.rows() - 1, qc = queries.cols() - 1, kc = d_key_ - 1;
    const float corners[8] = {queries(0, 0), queries(0, qc), queries(q, 0), queries(q, qc),
                              cache(0, 0),   cache(0, kc),   cache(k, 0),   cache(k, kc)};
    StreamKey print;  // the streams' hash, over the shape and the corners' bits
    print.add(queries.rows()).add(queries.cols()).add(cache.rows());
    for (float x : corners) {
        std::uint32_t bits;
        std::memcpy(&bits, &x, sizeof bits);
        print.add(bits);
    }
    const std::uint64_t h = print.value();
    return h | 1;  // never 0, the print of "no memo"
}

SoftmaxCache::Dims SoftmaxCache::size(const MemoryShape& shape, bool null_slot, int per_pair, std::int64_t fixed,
                                       std::int64_t min_pairs) {
    const std::int64_t row = std::int64_t{shape.d_key} + shape.d_value + per_pair, extra = null_slot ? 1 : 0;
    if (fixed == 0 && min_pairs == 1)  // the plain cache's arithmetic, as it always was
        return {shape.budget_floats ? *shape.budget_floats / row - extra : -1, row, row * (1 + extra)};
    return {shape.budget_floats ? (*shape.budget_floats - fixed) / row - extra : -1, row, fixed + row * (min_pairs + extra)};
}

SoftmaxCache::SoftmaxCache(const MemoryShape& shape, double beta, std::optional<double> null_logit, double slope,
                           std::unique_ptr<CachePolicy> policy)
    : d_key_(shape.d_key), d_value_(shape.d_value), beta_(static_cast<float>(beta)), hard_(std::isinf(beta)),
      slope_(static_cast<float>(slope)), policy_(policy ? std::move(policy) : std::make_unique<FifoPolicy>()),
      per_pair_(policy_->per_pair()), observes_(policy_->observes()),
      capacity_(size(shape, null_logit.has_value(), per_pair_, policy_->fixed_floats()).capacity) {
    if (std::isnan(beta) || beta < 0.0) throw std::invalid_argument("softmax cache: beta must be >= 0 (or +inf)");
    if (!std::isfinite(slope) || slope < 0.0) throw std::invalid_argument("softmax cache: slope must be finite and >= 0");
    if (!policy_->ring_order() && (null_logit || slope > 0.0))
        throw std::invalid_argument("softmax cache: a null slot or a recency bias needs the FIFO ring");
    if (null_logit) null_ = static_cast<float>(*null_logit);
    head_ = null_ ? row_floats() : policy_->fixed_floats();
    if (capacity_ > 0) buf_.reserve(static_cast<std::size_t>(head_ + capacity_ * row_floats()));
    clear_rows();
}

void SoftmaxCache::clear_rows() {
    buf_.assign(static_cast<std::size_t>(head_), 0.0f);
    if (null_) buf_[0] = *null_;
}

void SoftmaxCache::reset() {
    stored_ = 0;
    next_slot_ = 0;
    written_ = 0;
    pending_ = false;
    last_slot_ = -1;
    clear_rows();
    policy_->reset();
}

CacheRows SoftmaxCache::view() const {
    CacheRows c;
    c.data = buf_.data() + head_;
    c.fixed = null_ ? nullptr : buf_.data();
    c.stride = row_floats();
    c.d_key = d_key_, c.d_value = d_value_;
    c.stored = stored_, c.capacity = capacity_;
    c.ring_head = next_slot_;
    c.attend = [this](const float* q) { return weights(Eigen::Map<const Vec>(q, d_key_)); };
    return c;
}

void SoftmaxCache::observe(const float* query, const float* weights) const {
    policy_->observe(view(), query, weights);
    pending_ = false;
}

void SoftmaxCache::write(ConstVecRef key, ConstVecRef value) {
    if (observes_ && pending_ && last_slot_ >= 0) {  // the last write had no read: its key is its query
        const Vec q = rows().row(last_slot_).leftCols(d_key_).transpose();
        observe(q.data(), weights(q).data());
    }
    const std::int64_t pos = written_++;
    std::int64_t slot;
    if (capacity_ < 0 || stored_ < capacity_) {
        slot = stored_++;
        buf_.resize(static_cast<std::size_t>(head_ + stored_ * row_floats()));
    } else {
        slot = policy_->victim(view(), key.data(), pos);
        if (slot >= 0) policy_->evict(view(), slot);
        if (policy_->ring_order()) next_slot_ = (slot + 1) % capacity_;
    }
    pending_ = true;
    last_slot_ = slot;
    if (slot < 0) return;  // the policy keeps the held pairs
    float* row = buf_.data() + head_ + slot * row_floats();
    std::copy(key.data(), key.data() + d_key_, row);
    std::copy(value.data(), value.data() + d_value_, row + d_key_);
    policy_->admit(view(), slot, pos);
}

void SoftmaxCache::write_batch(ConstMatRef keys, ConstMatRef values) {
    const std::int64_t n = keys.rows();
    if (observes_ || per_pair_ > 0) {  // every write scores the cache or sets its floats: one at a time
        for (std::int64_t i = 0; i < n; ++i) write(keys.row(i).transpose(), values.row(i).transpose());
        return;
    }
    const std::int64_t fresh = capacity_ < 0 ? n : std::min(n, capacity_ - stored_);
    if (fresh > 0) {  // rows appended without eviction, copied as one block
        buf_.resize(static_cast<std::size_t>(head_ + (stored_ + fresh) * row_floats()));
        Eigen::Map<RowMat> block(buf_.data() + head_ + stored_ * row_floats(), fresh, row_floats());
        block.leftCols(d_key_) = keys.topRows(fresh);
        block.middleCols(d_key_, d_value_) = values.topRows(fresh);
        stored_ += fresh;
        written_ += fresh;
        pending_ = true;
        last_slot_ = stored_ - 1;
    }
    for (std::int64_t i = std::max<std::int64_t>(fresh, 0); i < n; ++i)
        write(keys.row(i).transpose(), values.row(i).transpose());
}

float SoftmaxCache::age(std::int64_t slot) const {
    // The newest pair sits just before next_slot_ in the ring (at stored_ − 1 until it wraps),
    // so a slot's age follows from the ring's head: nothing per slot is stored.
    return static_cast<float>(stored_ - 1 - (slot - next_slot_ + stored_) % stored_);
}

namespace {

constexpr int kScoreKeys = 8;  // keys scored side by side, one a lane
using ScoreFloats = float __attribute__((vector_size(4 * kScoreKeys)));
using ScoreDoubles = double __attribute__((vector_size(8 * kScoreKeys)));

/// The scores of eight keys (kt: their entry j side by side at kt[8j]) against R queries (rows
/// `q_stride` apart), into out[t · count + u]: each lane one key's double chain in j order from 0,
/// the R queries' chains side by side.
template <int R>
void block_scores(const float* kt, int d, const float* q, std::int64_t q_stride, double* out, std::int64_t count) {
    ScoreDoubles s[R] = {};
    for (int j = 0; j < d; ++j) {
        ScoreFloats k;
        std::memcpy(&k, kt + static_cast<std::ptrdiff_t>(j) * kScoreKeys, sizeof k);
        const ScoreDoubles kd = __builtin_convertvector(k, ScoreDoubles);
        for (int t = 0; t < R; ++t) s[t] += kd * static_cast<double>(q[t * q_stride + j]);  // lane by lane: the scalar chain
    }
    for (int t = 0; t < R; ++t) std::memcpy(out + t * count, &s[t], sizeof s[t]);
}

/// scores[r · count + i] = Σ_j k_ij q_rj for the `count` keys at `keys` (rows `stride` floats
/// apart, d entries each) and the m queries at `queries` (rows `q_stride` apart): each product
/// of two floats exact in double, summed in j order from 0 — the reference loop at the end,
/// which takes the keys left over. The rest go eight at a time, copied into columns and scored
/// against every query (four at a time) before the next eight: the keys come from memory once
/// for all m queries, not once a query, and the chains run side by side in vectors where one
/// key's chain waits on its last addition. Each (key, query) sum is the same operations in the
/// same order, so the same bits (tests/test_extremes.cpp).
void exact_scores(const float* keys, std::int64_t stride, std::int64_t count, int d, const float* queries,
                  std::int64_t q_stride, std::int64_t m, double* scores) {
    constexpr int kRows = 4;
    thread_local std::vector<float> kt;
    kt.resize(static_cast<std::size_t>(d) * kScoreKeys);
    std::int64_t i = 0;
    for (; i + kScoreKeys <= count; i += kScoreKeys) {
        for (int u = 0; u < kScoreKeys; ++u)
            for (int j = 0; j < d; ++j) kt[static_cast<std::size_t>(j * kScoreKeys + u)] = keys[(i + u) * stride + j];
        std::int64_t r = 0;
        for (; r + kRows <= m; r += kRows) block_scores<kRows>(kt.data(), d, queries + r * q_stride, q_stride, scores + r * count + i, count);
        for (; r < m; ++r) block_scores<1>(kt.data(), d, queries + r * q_stride, q_stride, scores + r * count + i, count);
    }
    for (; i < count; ++i) {  // the reference: one (key, query) chain
        const float* k = keys + i * stride;
        for (std::int64_t r = 0; r < m; ++r) {
            const float* q = queries + r * q_stride;
            double s = 0.0;
            for (int j = 0; j < d; ++j) s += static_cast<double>(k[j]) * static_cast<double>(q[j]);
            scores[r * count + i] = s;
        }
    }
}

}  // namespace

void SoftmaxCache::hard_weights(const float* query, const std::vector<char>* allowed, std::int64_t hidden_slot,
                                float* out) const {
    std::vector<double> score(static_cast<std::size_t>(stored_));
    exact_scores(rows().data(), row_floats(), stored_, d_key_, query, d_key_, 1, score.data());
    hard_weights(score.data(), allowed, hidden_slot, out);
}

void SoftmaxCache::hard_weights(const double* score, const std::vector<char>* allowed, std::int64_t hidden_slot,
                                float* out) const {
    const auto usable = [&](std::int64_t i) { return i != hidden_slot && (!allowed || (*allowed)[static_cast<std::size_t>(i)]); };
    // Exact scores, the same bits for equal keys wherever they sit: float products are exact in
    // double, summed in one fixed order (a matrix product's blocking may round rows differently).
    double peak = -std::numeric_limits<double>::infinity();
    bool nan = false, any = false;
    for (std::int64_t i = 0; i < stored_; ++i) {
        const double s = score[i];
        if (!usable(i)) continue;
        any = true;
        if (std::isnan(s)) nan = true;
        else peak = std::max(peak, s);
    }
    std::fill(out, out + stored_, 0.0f);
    if (!any) return;  // the hidden pair was the only one
    if (nan || !std::isfinite(peak)) {
        std::fill(out, out + stored_, std::numeric_limits<float>::quiet_NaN());
        return;
    }
    // β → ∞: every weight off the largest score vanishes; among the keys tied at it the logits
    // differ only by the recency bias −slope·age (none at slope 0: equal weights). A null
    // slot's constant logit beats β·peak when peak < 0, loses when peak > 0, and at peak = 0
    // joins the tied keys' softmax.
    if (null_ && peak < 0.0) return;  // all weight on the null slot, whose value is 0
    float youngest = std::numeric_limits<float>::infinity();
    for (std::int64_t i = 0; i < stored_; ++i)
        if (usable(i) && score[i] == peak) youngest = std::min(youngest, age(i));
    float top = -slope_ * youngest;  // the largest logit among the tied
    const bool with_null = null_ && peak == 0.0;
    if (with_null) top = std::max(top, *null_);
    float sum = with_null ? std::exp(*null_ - top) : 0.0f;
    for (std::int64_t i = 0; i < stored_; ++i)
        if (usable(i) && score[i] == peak) sum += (out[i] = std::exp(-slope_ * age(i) - top));
    for (std::int64_t i = 0; i < stored_; ++i) out[i] /= sum;
}

Vec SoftmaxCache::weights(ConstVecRef query, const std::vector<char>* allowed) const {
    if (hard_) {
        bool any = false;
        for (std::int64_t i = 0; i < stored_ && !any; ++i) any = !allowed || (*allowed)[static_cast<std::size_t>(i)];
        if (!any) throw std::invalid_argument("softmax cache: the mask allows no stored pair");
        const Vec q = query;
        Vec w(stored_);
        hard_weights(q.data(), allowed, -1, w.data());
        return w;
    }
    const auto cache = rows();
    Vec scores = cache.leftCols(d_key_) * query;  // raw dot products
    float peak = -std::numeric_limits<float>::infinity();
    for (Eigen::Index i = 0; i < scores.size(); ++i)
        if (!allowed || (*allowed)[static_cast<std::size_t>(i)]) peak = std::max(peak, scores(i));
    if (!std::isfinite(peak)) throw std::invalid_argument("softmax cache: the mask allows no stored pair");
    if (slope_ > 0.0f) {  // logits β k·q − slope·age: the largest is found over the logits
        float top = null_ ? *null_ : -std::numeric_limits<float>::infinity();
        for (Eigen::Index i = 0; i < scores.size(); ++i)
            if (!allowed || (*allowed)[static_cast<std::size_t>(i)]) top = std::max(top, beta_ * scores(i) - slope_ * age(i));
        for (Eigen::Index i = 0; i < scores.size(); ++i)
            scores(i) = (!allowed || (*allowed)[static_cast<std::size_t>(i)]) ? std::exp(beta_ * scores(i) - slope_ * age(i) - top) : 0.0f;
        return scores / (scores.sum() + (null_ ? std::exp(*null_ - top) : 0.0f));
    }
    const float top = null_ ? std::max(beta_ * peak, *null_) : beta_ * peak;  // the largest logit
    for (Eigen::Index i = 0; i < scores.size(); ++i)
        scores(i) = (!allowed || (*allowed)[static_cast<std::size_t>(i)]) ? std::exp(beta_ * scores(i) - top) : 0.0f;
    return scores / (scores.sum() + (null_ ? std::exp(*null_ - top) : 0.0f));
}

void SoftmaxCache::read(ConstVecRef query, VecRef out) const {
    if (stored_ == 0) {
        out.setZero();
        return;
    }
    const Vec w = weights(query);
    out.noalias() = rows().middleCols(d_key_, d_value_).transpose() * w;
    if (observes_) observe(query.data(), w.data());
}

void SoftmaxCache::read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options) const {
    if (options.hidden.empty()) return read_rows(queries, nullptr, out);
    if (!policy_->ring_order()) require_no_hidden(options);  // only FIFO declares can_hide_pairs
    if (static_cast<Eigen::Index>(options.hidden.size()) != queries.rows())
        throw std::invalid_argument("softmax cache: one hidden pair per query is needed");
    read_rows(queries, &options.hidden, out);
}

void SoftmaxCache::read_rows(ConstMatRef queries, const IndexView* hidden, MatRef out) const {
    if (stored_ == 0) {
        out.setZero();
        return;
    }
    const auto cache = rows();
    const auto weighted_values = [&](const RowMat& p) {  // out = P V, on register tiles (core/simd.hpp)
        if (d_value_ % simd::kLanes == 0 && d_value_ > 0)
            simd::product(p.data(), p.cols(), cache.data() + d_key_, row_floats(), stored_, out.data(), out.outerStride(),
                          out.rows(), d_value_);
        else
            out.noalias() = p * cache.middleCols(d_key_, d_value_);
    };
    const bool memo = !observes_ && !hidden && queries.rows() > 0 && queries.rows() * stored_ <= kMemoWeights;
    if (memo && memo_weights_.rows() == queries.rows() && memo_weights_.cols() == stored_ &&
        (slope_ == 0.0f || memo_next_slot_ == next_slot_) &&  // the ages follow the ring's head
        memo_queries_.cols() == queries.cols() && same_rows(memo_queries_, queries.data(), queries.outerStride()) &&
        same_rows(memo_keys_, cache.data(), row_floats())) {
        weighted_values(memo_weights_);  // the same weights as computed below
        return;
    }
    RowMat p;
    attention(queries, hidden, p);
    weighted_values(p);
    if (observes_) {  // each query's weights, in order, to the policy
        for (Eigen::Index i = 0; i < queries.rows(); ++i) {
            const Vec q = queries.row(i).transpose();
            observe(q.data(), p.row(i).data());
        }
    }
    // Kept only when this read looks like the last one (a cheap print of its shape and
    // edge rows): reads that never repeat pay no copies. A hit is still checked in full.
    const std::uint64_t print = memo ? fingerprint(queries, cache) : 0;
    if (memo && print == last_print_) {
        memo_keys_ = cache.leftCols(d_key_);
        memo_next_slot_ = next_slot_;
        memo_queries_ = queries;
        memo_weights_ = std::move(p);
    }
    last_print_ = print;
}

void SoftmaxCache::attention(ConstMatRef queries, const IndexView* hidden, RowMat& p) const {
    if (hard_) {  // β = ∞: the largest exact score's keys (hard_weights)
        p.resize(queries.rows(), stored_);
        // the exact scores of up to 32 queries in one pass over the keys, then each query's weights
        constexpr Eigen::Index kQueries = 32;
        std::vector<double> scores(static_cast<std::size_t>(std::min(kQueries, queries.rows()) * stored_));
        for (Eigen::Index i0 = 0; i0 < queries.rows(); i0 += kQueries) {
            const Eigen::Index m = std::min(kQueries, queries.rows() - i0);
            exact_scores(rows().data(), row_floats(), stored_, d_key_, queries.row(i0).data(), queries.outerStride(), m,
                         scores.data());
            for (Eigen::Index i = i0; i < i0 + m; ++i)
                hard_weights(scores.data() + (i - i0) * stored_, nullptr,
                             hidden ? slot_of((*hidden)[static_cast<std::size_t>(i)]) : -1, p.row(i).data());
        }
        return;
    }
    p.noalias() = queries * rows().leftCols(d_key_).transpose();  // m × stored raw dot products
    if (slope_ > 0.0f) {  // the recency bias −slope·age joins the logits (ALiBi)
        Eigen::Matrix<float, 1, Eigen::Dynamic> bias(stored_);
        for (std::int64_t j = 0; j < stored_; ++j) bias(j) = -slope_ * age(j);
        for (Eigen::Index i = 0; i < p.rows(); ++i) {
            auto row = p.row(i);
            const std::int64_t slot = hidden ? slot_of((*hidden)[static_cast<std::size_t>(i)]) : -1;
            row = beta_ * row + bias;
            if (slot >= 0) row(slot) = -std::numeric_limits<float>::infinity();
            const float peak = row.maxCoeff();
            if (slot >= 0 && peak == -std::numeric_limits<float>::infinity()) {  // the hidden pair was the only one
                row.setZero();
                continue;
            }
            const float top = null_ ? std::max(peak, *null_) : peak;
            row = (row.array() - top).exp();
            if (slot >= 0) row(slot) = 0.0f;
            row /= row.sum() + (null_ ? std::exp(*null_ - top) : 0.0f);
        }
        return;
    }
    for (Eigen::Index i = 0; i < p.rows(); ++i) {
        auto row = p.row(i);
        const std::int64_t slot = hidden ? slot_of((*hidden)[static_cast<std::size_t>(i)]) : -1;
        if (slot >= 0) row(slot) = -std::numeric_limits<float>::infinity();
        const float peak = row.maxCoeff();
        if (slot >= 0 && peak == -std::numeric_limits<float>::infinity()) {  // the hidden pair was the only one
            row.setZero();
            continue;
        }
        if (null_) {  // the null slot's logit joins the softmax; its value is 0
            const float top = std::max(beta_ * peak, *null_);
            row = (beta_ * row.array() - top).exp();
            if (slot >= 0) row(slot) = 0.0f;
            row /= row.sum() + std::exp(*null_ - top);
            continue;
        }
        row = (beta_ * (row.array() - peak)).exp();
        if (slot >= 0) row(slot) = 0.0f;  // exactly 0, also at β = 0 (where 0 · −∞ is NaN)
        row /= row.sum();
    }
}

void SoftmaxCache::require_fifo_for_backward() const {
    // The backward passes differentiate FIFO's keep rule only: another policy's evictions
    // depend on scores, so its entry declares neither backward.
    if (dynamic_cast<const FifoPolicy*>(policy_.get()) == nullptr)
        throw std::logic_error("this KV policy has no backward pass (only FIFO's cache declares one)");
}

void SoftmaxCache::backward(ConstMatRef keys, ConstMatRef, ConstMatRef queries, ConstMatRef d_reads, MatRef d_keys,
                            MatRef d_queries) const {
    require_fifo_for_backward();
    d_keys.setZero();
    if (stored_ == 0 || hard_) {  // β = ∞: the read is piecewise constant in the keys and the query
        d_queries.setZero();
        return;
    }
    const auto cache = rows();
    RowMat p;
    attention(queries, nullptr, p);
    RowMat d_s = d_reads * cache.middleCols(d_key_, d_value_).transpose();  // ∂p: m × stored
    for (Eigen::Index i = 0; i < p.rows(); ++i) {
        const float mean = p.row(i).dot(d_s.row(i));
        d_s.row(i) = beta_ * p.row(i).cwiseProduct((d_s.row(i).array() - mean).matrix());
    }
    d_queries.noalias() = d_s * cache.leftCols(d_key_);
    const RowMat d_slots = d_s.transpose() * queries;  // stored × d_k, in slot order
    for (Eigen::Index w = 0; w < keys.rows(); ++w)
        if (const std::int64_t slot = slot_of(w); slot >= 0) d_keys.row(w) = d_slots.row(slot);
}

void SoftmaxCache::causal_backward(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates,
                                   ConstMatRef d_out, CausalGrads& grads) {
    const Eigen::Index n = keys.rows();
    if (d_out.rows() != n || d_out.cols() != values.cols())
        throw std::invalid_argument("causal_backward: d_out must be T x d_value");
    require_fifo_for_backward();
    reset();
    RowMat out(n, d_value_);
    causal(queries, keys, values, gates, out);  // the cache's own causal form (it refuses gate inputs)
    grads.d_queries.setZero(n, d_key_);
    grads.d_keys.setZero(n, d_key_);
    grads.d_values.setZero(n, d_value_);
    grads.d_log_decay.resize(0, 0), grads.d_beta.resize(0), grads.d_write_gate.resize(0);
    reset();
    for (Eigen::Index t = 0; t < n; ++t) {  // the same writes, and the weights each read used
        write(keys.row(t).transpose(), values.row(t).transpose());
        const Vec p = weights(queries.row(t).transpose());
        const std::int64_t oldest = written_ - stored_;  // write index of the oldest token held
        float mean = 0.0f;
        for (std::int64_t w = oldest; w < written_; ++w) mean += p(slot_of(w)) * d_out.row(t).dot(values.row(w));
        for (std::int64_t w = oldest; w < written_; ++w) {
            const float pw = p(slot_of(w));
            grads.d_values.row(w) += pw * d_out.row(t);
            if (hard_) continue;
            const float d_logit = beta_ * pw * (d_out.row(t).dot(values.row(w)) - mean);
            grads.d_queries.row(t) += d_logit * keys.row(w);
            grads.d_keys.row(w) += d_logit * queries.row(t);
        }
    }
}

std::int64_t SoftmaxCache::slot_of(std::int64_t write) const {
    if (!policy_->ring_order()) throw std::logic_error("softmax cache: slot_of needs the FIFO ring");
    const std::int64_t oldest = written_ - stored_;  // write index of the oldest pair held
    if (write < oldest || write >= written_) return -1;
    // Until the ring wraps, pair w sits in slot w (next_slot_ = 0); after, the oldest
    // sits at next_slot_ and the rest follow it around the ring.
    return (next_slot_ + (write - oldest)) % stored_;
}

}  // namespace memcap
