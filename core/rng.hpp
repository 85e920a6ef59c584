// memcap/core/rng.hpp — portable, counter-based random streams.
//
// Every random draw in memcap comes from a stream named by the things it
// depends on, never from thread ids or global state:
//
//     Rng rng = Rng::stream("task", task.canonical(), n, d, seed);
//
// The parts are hashed (FNV-1a over a typed byte encoding, then splitmix64)
// into a 64-bit key K. One Rng holds two independent counter-based sequences
// under K, both Random123 Philox4x32-10 with key {K mod 2^32, K >> 32}:
//
//  * Scalar draws — normal(), uniform(), chi_squared(), below() — come from
//    Boost.Random's distributions (fixed algorithms, unlike std::
//    normal_distribution) on an r123::Engine whose counter starts at zero
//    (blocks {1, 0, 0, 0}, {2, 0, 0, 0}, …). normal() is Boost's
//    normal_distribution<double> (ziggurat), one draw per call.
//
//  * Array fills — fill_normal() and unit_rows() — come from the normal stream
//    of core/normal_stream.hpp: Z_q is output q mod 4 of the Philox block with
//    counter {b mod 2^32, b >> 32, 0, 0x4e4f524d}, b = ⌊q/4⌋, through
//    Box–Muller with float-accurate polynomial log, sin and cos in single
//    precision (IEEE +, −, ×, sqrt and exact integer steps only: the same bits
//    scalar or vectorised, on every x86-64 ISA). The Rng keeps a fill position p (number of normals
//    filled so far, starting at 0): a fill of N entries writes Z_p … Z_{p+N−1}
//    in storage order, each times sd (in double), and sets p += N. So
//    consecutive fills read one unbroken sequence (fill(a) then fill(b) equals
//    fill(a + b)), fills of different lengths share their prefix, and a float
//    and a double fill get the same values (a double gets the float widened).
//
// The two sequences use disjoint counters (the Engine's fourth word is 0), so
// scalar draws and fills can be mixed in any order: neither moves the other,
// and each call's numbers depend only on K and how much of its own sequence
// came before. A stream gives the same numbers on every platform, thread
// count and MPI rank.
#pragma once

#include "core/normal_stream.hpp"

#include <Random123/conventional/Engine.hpp>
#include <Random123/philox.h>

#include <boost/random/chi_squared_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cstddef>
#include <array>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace memcap {

/// Hashes a sequence of strings and integers into a 64-bit stream key.
class StreamKey {
public:
    StreamKey& add(std::string_view text) {
        mix_byte('s');
        for (unsigned char c : text) mix_byte(c);
        mix_byte(0);
        return *this;
    }
    template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
    StreamKey& add(Int value) {
        mix_byte('i');
        auto v = static_cast<std::uint64_t>(static_cast<std::int64_t>(value));
        for (int i = 0; i < 8; ++i) mix_byte(static_cast<unsigned char>(v >> (8 * i)));
        return *this;
    }
    std::uint64_t value() const {
        std::uint64_t z = h_ + 0x9e3779b97f4a7c15ULL;  // splitmix64 finaliser
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

private:
    void mix_byte(unsigned char c) { h_ = (h_ ^ c) * 0x100000001b3ULL; }
    std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

/// One independent random stream. Cheap to create; not thread-safe to share.
class Rng {
public:
    using Engine = r123::Engine<r123::Philox4x32>;

    explicit Rng(std::uint64_t key) : key_(key) {
        Engine::ukey_type uk = {{static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32)}};
        engine_.seed(uk);
    }

    /// The stream named by `parts` (strings and integers, in order).
    template <class... Parts>
    static Rng stream(const Parts&... parts) {
        StreamKey k;
        (k.add(parts), ...);
        return Rng(k.value());
    }

    double normal() { return normal_(engine_); }
    double uniform() { return boost::random::uniform_01<double>()(engine_); }
    /// Chi-squared with `dof` degrees of freedom (Boost's gamma algorithm: portable).
    double chi_squared(double dof) { return boost::random::chi_squared_distribution<double>(dof)(engine_); }
    /// Uniform integer in [0, n).
    std::int64_t below(std::int64_t n) {
        return boost::random::uniform_int_distribution<std::int64_t>(0, n - 1)(engine_);
    }

    /// out[0 .. count) = the next `count` values of below(n), and the stream left
    /// where `count` calls of below(n) leave it: the same numbers, drawn a batch
    /// of Philox blocks at a time (core/normal_stream.hpp, engine_words) instead
    /// of one Engine call each. Boost's algorithm for n ≤ 2^32 is repeated here:
    /// with R = n − 1 and the Engine's words w in [0, 2^32), bucket =
    /// ⌊(2^32 − 1)/(R + 1)⌋ (+1 when (2^32 − 1) mod (R + 1) = R), and each draw
    /// takes words until ⌊w / bucket⌋ ≤ R. n = 1 draws no word; n > 2^32 calls below().
    template <class Int>
    void below(std::int64_t n, Int* out, std::size_t count) {
        static_assert(std::is_integral_v<Int>, "below() fills integers");
        constexpr std::uint64_t kWords = std::uint64_t{1} << 32;
        const auto range = static_cast<std::uint64_t>(n - 1);
        if (n <= 1 || range >= kWords - 1) {  // no word, a word as is, or Boost's multi-word path
            for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<Int>(below(n));
            return;
        }
        // the rest of the Engine's current block, one call at a time
        std::size_t i = 0;
        for (; i < count && engine_.getcounter().second != 0; ++i) out[i] = static_cast<Int>(below(n));
        if (i == count) return;
        const Engine::ctr_type start = engine_.getcounter().first;  // the last block handed out
        const std::uint64_t block = std::uint64_t{start[0]} | std::uint64_t{start[1]} << 32;
        if (start[2] != 0 || start[3] != 0 || block > ~std::uint64_t{0} - (count - i) * 64) {  // never in practice
            for (; i < count; ++i) out[i] = static_cast<Int>(below(n));
            return;
        }
        const auto top = static_cast<std::uint32_t>(kWords - 1);
        auto bucket = static_cast<std::uint32_t>(top / (range + 1));
        if (top % (range + 1) == range) ++bucket;
        // ⌊w · inverse / 2^64⌋ is ⌊w / bucket⌋, or one below when bucket divides w
        const std::uint64_t inverse = ~std::uint64_t{0} / bucket;
        constexpr std::size_t kBlocks = 64;
        alignas(64) std::uint32_t words[4 * kBlocks];
        std::uint64_t used = 0;  // words taken from block + 1 on
        std::size_t have = 0, at = 0;
        while (i < count) {
            if (at == have) {  // enough blocks for the draws left, if none is rejected
                const std::size_t blocks = std::min<std::size_t>(kBlocks, (count - i + 3) / 4);
                engine_words(key_, block + 1 + used / 4, words, blocks);
                have = 4 * blocks, at = 0;
            }
            const std::uint32_t w = words[at++];
            ++used;
            const std::uint64_t w64 = w;  // ⌊w · inverse / 2^64⌋ in 64-bit pieces (no overflow: w < 2^32)
            auto q = static_cast<std::uint32_t>((w64 * (inverse >> 32) + ((w64 * (inverse & 0xffffffffU)) >> 32)) >> 32);
            if (w - q * bucket >= bucket) ++q;
            if (q <= range) out[i++] = static_cast<Int>(q);
        }
        Engine::ctr_type last = start;
        const std::uint64_t full = used / 4, part = used % 4;
        last.incr(part ? full + 1 : full);
        engine_.setcounter(last, static_cast<Engine::result_type>(part ? 4 - part : 0));
    }

    /// Fills `m` with N(0, sd²) entries in storage order: the next m.size()
    /// normals of the fill stream (see the header), each times sd.
    template <class Derived>
    void fill_normal(Eigen::DenseBase<Derived>& m, double sd = 1.0) {
        using Scalar = typename Derived::Scalar;
        static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                      "fill_normal fills float or double arrays");
        const auto n = static_cast<std::size_t>(m.size());
        normal_stream_fill(key_, fill_position_, m.derived().data(), n, sd);
        fill_position_ += n;
    }

    /// The key of this stream's normals (normal_stream_fill), for drawing any position of
    /// it directly (codes drawn where they are used: tasks/spectral_codes.hpp).
    std::uint64_t key() const { return key_; }

    /// Where the stream stands: its key, its fill position and its scalar draws' counter (with
    /// the words left of the current block). Two Rngs in the same state draw the same numbers
    /// from here on, so what a draw built can be kept by it (FeatureMap's projections).
    std::array<std::uint64_t, 5> state() const {
        const auto c = engine_.getcounter();
        return {key_, fill_position_, (std::uint64_t{c.first[1]} << 32) | c.first[0],
                (std::uint64_t{c.first[3]} << 32) | c.first[2], static_cast<std::uint64_t>(c.second)};
    }

    /// Normals the fill stream has handed out so far (the next fill starts here).
    std::uint64_t fill_position() const { return fill_position_; }

    /// An m × d matrix of N(0, 1) rows normalised to unit length: random unit codes.
    template <class Mat>
    Mat unit_rows(Eigen::Index m, Eigen::Index d) {
        Mat out(m, d);
        fill_normal(out);
        for (Eigen::Index i = 0; i < m; ++i) {
            const auto norm = out.row(i).norm();
            if (norm > 0) out.row(i) /= norm;
        }
        return out;
    }

private:
    std::uint64_t key_;
    std::uint64_t fill_position_ = 0;
    Engine engine_;
    boost::random::normal_distribution<double> normal_;
};

}  // namespace memcap
