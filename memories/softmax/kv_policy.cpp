// memcap/memories/softmax/kv_policy.cpp — see kv_policy.hpp.
#include "memories/softmax/kv_policy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memcap {

namespace {

/// The held slot with the least `score(i)` among those `eligible(i)`; ties: the oldest
/// (smallest position). −1 when none is eligible.
template <class Score, class Eligible, class Position>
std::int64_t least(std::int64_t stored, Score score, Eligible eligible, Position position) {
    std::int64_t best = -1;
    double best_score = 0.0, best_pos = 0.0;
    for (std::int64_t i = 0; i < stored; ++i) {
        if (!eligible(i)) continue;
        const double s = score(i), p = position(i);
        if (best < 0 || s < best_score || (s == best_score && p < best_pos)) best = i, best_score = s, best_pos = p;
    }
    return best;
}

double dot(const float* a, const float* b, int n) {
    double s = 0.0;
    for (int j = 0; j < n; ++j) s += static_cast<double>(a[j]) * static_cast<double>(b[j]);
    return s;
}

}  // namespace

std::int64_t SinkPolicy::victim(const CacheRows& c, const float*, std::int64_t) {
    const std::int64_t window = c.capacity - sinks_;  // ≥ 1: the sizing keeps one window slot
    const std::int64_t slot = sinks_ + head_;
    head_ = (head_ + 1) % window;
    return slot;
}

H2OPolicy::H2OPolicy(double recent_share, std::int64_t capacity)
    : recent_(capacity < 0 ? 0 : static_cast<std::int64_t>(std::floor(recent_share * static_cast<double>(capacity)))) {}

std::int64_t H2OPolicy::victim(const CacheRows& c, const float*, std::int64_t pos) {
    // The last recent_ writes, the incoming one included, are positions above pos − recent_.
    const double newest_evictable = static_cast<double>(pos - std::max<std::int64_t>(recent_, 1));
    const std::int64_t slot = least(
        c.stored, [&](std::int64_t i) { return static_cast<double>(c.extra(i)[0]); },
        [&](std::int64_t i) { return static_cast<double>(c.extra(i)[1]) <= newest_evictable; },
        [&](std::int64_t i) { return static_cast<double>(c.extra(i)[1]); });
    // C distinct positions below pos: at least C − R + 1 ≥ 1 of them are evictable
    return slot >= 0 ? slot : 0;
}

void H2OPolicy::admit(const CacheRows& c, std::int64_t slot, std::int64_t pos) {
    c.extra(slot)[0] = 0.0f;
    c.extra(slot)[1] = static_cast<float>(pos);  // exact below 2^24 writes
}

void H2OPolicy::observe(const CacheRows& c, const float*, const float* weights) {
    for (std::int64_t i = 0; i < c.stored; ++i) c.extra(i)[0] += weights[i];
}

void MergePolicy::evict(const CacheRows& c, std::int64_t slot) {
    std::int64_t nearest = -1;
    double best = -std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < c.stored; ++i) {
        if (i == slot) continue;
        const double s = dot(c.key(i), c.key(slot), c.d_key);
        if (nearest < 0 || s > best) nearest = i, best = s;
    }
    if (nearest < 0) return;  // one pair held: nothing to merge into
    float* kept = c.key(nearest);
    const float* gone = c.key(slot);
    const double a = c.extra(nearest)[0], b = c.extra(slot)[0];
    const double wa = a + b > 0.0 ? a / (a + b) : 0.5, wb = 1.0 - wa;
    for (int j = 0; j < c.d_key + c.d_value; ++j)  // the key, then the value
        kept[j] = static_cast<float>(wa * kept[j] + wb * gone[j]);
    c.extra(nearest)[0] = static_cast<float>(a + b);
}

std::int64_t TovaPolicy::victim(const CacheRows& c, const float*, std::int64_t) {
    std::int64_t slot = 0;
    for (std::int64_t i = 1; i < c.stored; ++i)
        if (c.extra(i)[0] < c.extra(slot)[0]) slot = i;
    return slot;
}

void TovaPolicy::admit(const CacheRows& c, std::int64_t slot, std::int64_t) { c.extra(slot)[0] = 0.0f; }

void TovaPolicy::observe(const CacheRows& c, const float*, const float* weights) {
    for (std::int64_t i = 0; i < c.stored; ++i) c.extra(i)[0] = weights[i];
}

std::int64_t SnapKVPolicy::victim(const CacheRows& c, const float*, std::int64_t pos) {
    std::vector<double> score(static_cast<std::size_t>(c.stored), 0.0);
    const std::int64_t kept = std::min(seen_, window_);
    for (std::int64_t q = 0; q < kept; ++q) {  // the window's queries in a fixed order: slot 0 first
        const Vec w = c.attend(c.fixed + q * d_key_);
        for (std::int64_t i = 0; i < c.stored; ++i) score[static_cast<std::size_t>(i)] += w(i);
    }
    const double newest_evictable = static_cast<double>(pos - window_);
    const std::int64_t slot = least(
        c.stored, [&](std::int64_t i) { return score[static_cast<std::size_t>(i)]; },
        [&](std::int64_t i) { return static_cast<double>(c.extra(i)[0]) <= newest_evictable; },
        [&](std::int64_t i) { return static_cast<double>(c.extra(i)[0]); });
    return slot >= 0 ? slot : 0;  // C ≥ w distinct positions below pos: one is evictable
}

void SnapKVPolicy::admit(const CacheRows& c, std::int64_t slot, std::int64_t pos) {
    c.extra(slot)[0] = static_cast<float>(pos);  // exact below 2^24 writes
}

void SnapKVPolicy::observe(const CacheRows& c, const float* query, const float*) {
    std::copy(query, query + d_key_, c.fixed + (seen_ % window_) * d_key_);
    ++seen_;
}

std::int64_t KNormPolicy::victim(const CacheRows& c, const float* key, std::int64_t) {
    std::int64_t slot = 0;
    double largest = dot(c.key(0), c.key(0), c.d_key);
    for (std::int64_t i = 1; i < c.stored; ++i)
        if (const double n = dot(c.key(i), c.key(i), c.d_key); n > largest) slot = i, largest = n;
    return dot(key, key, c.d_key) > largest ? -1 : slot;
}

std::int64_t RandomPolicy::victim(const CacheRows& c, const float*, std::int64_t) { return rng_.below(c.stored); }

}  // namespace memcap
