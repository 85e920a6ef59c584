// memcap/memories/softmax/compressed_cache.cpp — see compressed_cache.hpp.
#include "memories/softmax/compressed_cache.hpp"

#include "core/error.hpp"
#include "core/rng.hpp"
#include "memories/precision.hpp"

#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace memcap {

namespace {

using I = std::int64_t;

constexpr int kStreamBits = 31;  // bits of the stream in each 32-bit word (bit 30 kept clear)
constexpr int kHalfBits = 16;    // a scale or a zero point: an IEEE half, as KIVI keeps them

/// The IEEE half's bits of `x`, a float a half represents exactly (round_to fp16 made it so).
std::uint32_t half_bits(float x) {
    const std::uint32_t sign = std::signbit(x) ? 0x8000u : 0u;
    const float a = std::abs(x);
    if (a == 0.0f) return sign;
    if (std::isinf(a)) return sign | 0x7C00u;
    if (a < 0x1p-14f) return sign | static_cast<std::uint32_t>(std::ldexp(a, 24));  // subnormal: m 2^−24
    int e;
    const float f = std::frexp(a, &e);  // a = f 2^e, f in [0.5, 1)
    const auto mantissa = static_cast<std::uint32_t>(std::ldexp(f, 11)) - 1024u;
    return sign | (static_cast<std::uint32_t>(e - 1 + 15) << 10) | mantissa;
}

/// A bit stream over 32-bit words, kStreamBits to a word (bit 30 of every word stays 0).
class BitStream {
public:
    explicit BitStream(std::vector<std::uint32_t>& words) : w_(words) {}
    void put(std::uint32_t value, int bits) {
        for (int i = 0; i < bits; ++i, ++at_)
            if ((value >> i) & 1u) w_[static_cast<std::size_t>(at_ / kStreamBits)] |= 1u << physical(at_ % kStreamBits);
    }

private:
    static int physical(I bit) { return bit < 30 ? static_cast<int>(bit) : 31; }
    std::vector<std::uint32_t>& w_;
    I at_ = 0;
};

/// (scale, zero) of asymmetric min-max quantisation of x[0..n) (stride apart) at L + 1 levels,
/// each rounded to a half; the codes c = clamp(round((x − zero) / scale), 0, L) read c·scale + zero.
struct Quantiser {
    float scale = 0.0f, zero = 0.0f;
    Quantiser(const float* x, I n, I stride, int levels) {
        float lo = x[0], hi = x[0];
        for (I i = 1; i < n; ++i) lo = std::min(lo, x[i * stride]), hi = std::max(hi, x[i * stride]);
        scale = (hi - lo) / static_cast<float>(levels);
        zero = lo;
        round_to(Precision::fp16, &scale, 1);
        round_to(Precision::fp16, &zero, 1);
    }
    std::uint32_t code(float x, int levels) const {
        if (!(scale > 0.0f)) return 0u;
        const float c = std::nearbyint((x - zero) / scale);
        return static_cast<std::uint32_t>(std::clamp(c, 0.0f, static_cast<float>(levels)));
    }
    float value(std::uint32_t c) const { return static_cast<float>(c) * scale + zero; }
};

}  // namespace

KiviCache::Dims KiviCache::size(const MemoryShape& shape, int bits, int group, I residual) {
    Dims d{};
    d.row = I{shape.d_key} + shape.d_value;
    const I value_groups = (shape.d_value + group - 1) / group;
    const I stream = 2 * kHalfBits * shape.d_key + I{group} * d.row * bits + I{group} * 2 * kHalfBits * value_groups;
    d.group_words = (stream + kStreamBits - 1) / kStreamBits;
    d.min_budget = std::max<I>(residual, 1) * d.row;
    const I staging = (residual + group - 1) * d.row;  // the window's least: R plus a group filling
    if (!shape.budget_floats) {
        d.groups = -1, d.window = residual + group - 1, d.pairs = -1, d.state_floats = -1;
        return d;
    }
    const I b = *shape.budget_floats;
    d.groups = b >= staging ? (b - staging) / d.group_words : 0;
    d.window = (b - d.groups * d.group_words) / d.row;
    d.pairs = d.groups * group + d.window;
    d.state_floats = d.groups * d.group_words + d.window * d.row;
    return d;
}

I KiviCache::state_after(const Dims& d, int group, I writes) {
    if (writes <= d.window) return writes * d.row;
    if (d.groups == 0) return d.window * d.row;  // the plain cache, full
    const I made = (writes - d.window - 1) / group + 1;  // groups quantised so far: at writes W + 1, W + 1 + G, ...
    const I held = d.groups < 0 ? made : std::min(made, d.groups);
    return held * d.group_words + (writes - made * group) * d.row;
}

KiviCache::KiviCache(const MemoryShape& shape, double beta, int bits, int group, I residual)
    : d_key_(shape.d_key), d_value_(shape.d_value), bits_(bits), group_(group),
      dims_(size(shape, bits, group, residual)), beta_(beta) {
    if (bits != 2 && bits != 4 && bits != 8) throw std::invalid_argument("kivi: bits must be 2, 4 or 8");
    if (group < 1 || residual < 0) throw std::invalid_argument("kivi: group >= 1 and residual >= 0");
    if (shape.budget_floats && *shape.budget_floats < dims_.min_budget)
        throw std::invalid_argument("kivi: the budget is below the full-precision window");
    reset();
}

void KiviCache::reset() {
    groups_held_ = window_held_ = 0;
    buf_.clear();
    dequantised_.clear();
    if (dims_.groups == 0)  // the plain cache: W pairs at full precision
        reader_ = std::make_unique<SoftmaxCache>(MemoryShape(d_key_, d_value_, dims_.window * dims_.row), beta_);
    else
        reader_ = std::make_unique<SoftmaxCache>(MemoryShape(d_key_, d_value_, std::nullopt), beta_);
}

I KiviCache::state_floats() const {
    return dims_.groups == 0 ? reader_->state_floats() : static_cast<I>(buf_.size());
}

ConstStateView KiviCache::state() const {
    if (dims_.groups == 0) return reader_->state();
    return ConstStateView(buf_.data(), static_cast<I>(buf_.size()));
}

void KiviCache::read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options) const {
    require_no_hidden(options);
    reader_->read_batch(queries, out);
}

void KiviCache::write(ConstVecRef key, ConstVecRef value) {
    if (dims_.groups == 0) return reader_->write(key, value);
    buf_.insert(buf_.end(), key.data(), key.data() + d_key_);
    buf_.insert(buf_.end(), value.data(), value.data() + d_value_);
    if (++window_held_ <= dims_.window) return reader_->write(key, value);
    quantise_oldest();  // the window overflowed (W ≥ G − 1: it holds at least G pairs now)
    rebuild_reader();
}

void KiviCache::quantise_oldest() {
    const I row = dims_.row, g = group_, levels = (I{1} << bits_) - 1;
    const I window_at = groups_held_ * dims_.group_words;  // the window's first row in buf_
    const float* rows = buf_.data() + window_at;          // its oldest G rows: the group
    std::vector<std::uint32_t> words(static_cast<std::size_t>(dims_.group_words), 0u);
    BitStream s(words);
    std::vector<float> read(static_cast<std::size_t>(g * row));  // the group as it reads back
    const int L = static_cast<int>(levels);
    // keys per channel: one (scale, zero) per channel over the group's G tokens, then the codes
    std::vector<Quantiser> channel;
    for (int j = 0; j < d_key_; ++j) {
        channel.emplace_back(rows + j, g, row, L);
        s.put(half_bits(channel.back().scale), kHalfBits);
        s.put(half_bits(channel.back().zero), kHalfBits);
    }
    for (I t = 0; t < g; ++t)
        for (int j = 0; j < d_key_; ++j) {
            const std::uint32_t c = channel[static_cast<std::size_t>(j)].code(rows[t * row + j], L);
            s.put(c, bits_);
            read[static_cast<std::size_t>(t * row + j)] = channel[static_cast<std::size_t>(j)].value(c);
        }
    // values per token: one (scale, zero) per group of G channels, then the codes
    for (I t = 0; t < g; ++t) {
        const float* v = rows + t * row + d_key_;
        for (int c0 = 0; c0 < d_value_; c0 += group_) {
            const int n = std::min(group_, d_value_ - c0);
            const Quantiser q(v + c0, n, 1, L);
            s.put(half_bits(q.scale), kHalfBits);
            s.put(half_bits(q.zero), kHalfBits);
            for (int j = c0; j < c0 + n; ++j) {
                const std::uint32_t c = q.code(v[j], L);
                s.put(c, bits_);
                read[static_cast<std::size_t>(t * row + d_key_ + j)] = q.value(c);
            }
        }
    }
    // the window loses its oldest G rows; the group joins the groups (the oldest leaves when Ng are held)
    buf_.erase(buf_.begin() + window_at, buf_.begin() + window_at + g * row);
    window_held_ -= g;
    std::vector<float> block(words.size());
    std::memcpy(block.data(), words.data(), words.size() * sizeof(float));
    buf_.insert(buf_.begin() + window_at, block.begin(), block.end());
    dequantised_.insert(dequantised_.end(), read.begin(), read.end());
    ++groups_held_;
    if (dims_.groups > 0 && groups_held_ > dims_.groups) {  // FIFO: the oldest group is evicted
        buf_.erase(buf_.begin(), buf_.begin() + dims_.group_words);
        dequantised_.erase(dequantised_.begin(), dequantised_.begin() + g * row);
        --groups_held_;
    }
}

void KiviCache::rebuild_reader() {
    const I row = dims_.row, quantised = static_cast<I>(dequantised_.size()) / row;
    RowMat k(quantised + window_held_, d_key_), v(quantised + window_held_, d_value_);
    const auto put = [&](I r, const float* src) {
        for (int j = 0; j < d_key_; ++j) k(r, j) = src[j];
        for (int j = 0; j < d_value_; ++j) v(r, j) = src[d_key_ + j];
    };
    for (I r = 0; r < quantised; ++r) put(r, dequantised_.data() + r * row);
    const float* window = buf_.data() + groups_held_ * dims_.group_words;
    for (I r = 0; r < window_held_; ++r) put(quantised + r, window + r * row);
    reader_->reset();
    reader_->write_batch(k, v);
}

// ---------------------------------------------------------------------------------------------

LatentCache::Dims LatentCache::size(const MemoryShape& shape, double latent_share) {
    const I pair = I{shape.d_key} + shape.d_value;
    const I r = std::clamp<I>(static_cast<I>(std::floor(latent_share * static_cast<double>(pair))), 1, pair);
    return {r, shape.budget_floats ? *shape.budget_floats / r : -1};
}

LatentCache::LatentCache(const MemoryShape& shape, double beta, double latent_share, Rng& rng)
    : d_key_(shape.d_key), d_value_(shape.d_value), dims_(size(shape, latent_share)) {
    const int pair = d_key_ + d_value_, r = static_cast<int>(dims_.latent);
    // Orthonormal rows: the QR of a (d_k + d_v) × r Gaussian matrix, its Q's columns (sign-fixed).
    Eigen::MatrixXd g(pair, r);
    for (int j = 0; j < r; ++j)
        for (int i = 0; i < pair; ++i) g(i, j) = rng.normal();
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
    Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(pair, r);
    for (int j = 0; j < r; ++j)
        if (qr.matrixQR()(j, j) < 0) q.col(j) = -q.col(j);
    down_ = q.transpose().cast<float>();
    const std::optional<I> reader_budget =
        dims_.capacity < 0 ? std::nullopt : std::optional<I>(dims_.capacity * pair);
    reader_ = std::make_unique<SoftmaxCache>(MemoryShape(d_key_, d_value_, reader_budget), beta);
    if (dims_.capacity > 0) latents_.reserve(static_cast<std::size_t>(dims_.capacity * r));
}

void LatentCache::reset() {
    latents_.clear();
    next_ = 0;
    reader_->reset();
}

void LatentCache::write(ConstVecRef key, ConstVecRef value) {
    const I r = dims_.latent;
    Vec pair(d_key_ + d_value_);
    pair.head(d_key_) = key;
    pair.tail(d_value_) = value;
    const Vec c = down_ * pair;                       // the latent: the state
    const Vec back = down_.transpose() * c;           // [W_uk; W_uv] c: the pair the reads see
    float* slot;
    if (dims_.capacity < 0 || static_cast<I>(latents_.size()) < dims_.capacity * r) {
        latents_.resize(latents_.size() + static_cast<std::size_t>(r));
        slot = latents_.data() + latents_.size() - r;
    } else {  // FIFO: the ring's oldest latent, the slot the reader's ring overwrites too
        slot = latents_.data() + next_ * r;
        next_ = (next_ + 1) % dims_.capacity;
    }
    std::copy(c.data(), c.data() + r, slot);
    reader_->write(back.head(d_key_), back.tail(d_value_));
}

void LatentCache::read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options) const {
    require_no_hidden(options);
    reader_->read_batch(queries, out);
}

}  // namespace memcap
