// memcap/core/normal_stream.hpp — the counter-based normal stream behind Rng::fill_normal.
//
// A key names an infinite sequence of normals Z_0, Z_1, Z_2, …; a fill of N
// entries starting at position p writes Z_p … Z_{p+N−1}. Z_q depends only on
// (key, q), so a fill is a pure function of the key and its start position,
// and fills of different lengths from one position share their prefix.
//
// Block b = ⌊q/4⌋ is one Philox4x32-10 call (Random123's algorithm) with
//     key     = {low 32 bits of the 64-bit key, high 32 bits}
//     counter = {low 32 bits of b, high 32 bits of b, 0, kNormalTag}
// giving four 32-bit words w0..w3. kNormalTag ≠ 0 keeps these counters apart
// from those of r123::Engine (Rng's scalar draws), whose fourth word stays 0.
// Box–Muller turns the pair (w0, w1) into Z_4b, Z_4b+1 and the pair (w2, w3)
// into Z_4b+2, Z_4b+3; for a pair of words (a, c):
//
//     u = RN((a + ½) · 2^−32) ∈ [2^−33, 1]             (RN: round to nearest float)
//     r = sqrt(−2 · log_f(u))                          0 ≤ r ≤ 6.77
//     octant o = c >> 29, t = (c >> 6) mod 2^23        (26 bits of angle in all)
//     α = (t + ½) · RN(π/4) · 2^−23 ∈ (0, π/4)         in even octants, φ = o·π/4 + α
//     α = (2^23 − t − ½) · RN(π/4) · 2^−23             in odd octants,  φ = (o + 1)·π/4 − α
//     (cos φ, sin φ) = sin_f α and cos_f α, swapped in octants 1, 2, 5, 6, cos
//         negated in octants 2–5, sin negated in octants 4–7 (exact steps)
//     first normal = r cos φ, second = r sin φ
//
// log_f, sin_f and cos_f are Cephes' single-precision logf (range reduction,
// degree-9 polynomial) and sinf/cosf polynomials on |α| ≤ π/4, evaluated in
// float in the operation order written below. Every step is an IEEE
// single-precision +, −, × or sqrt (correctly rounded, no FMA: the project
// compiles with -ffp-contract=off and never -ffast-math), an exact
// int-to-float conversion, integer arithmetic or a select, so the scalar
// functions below and the vectorised loops in normal_stream.cpp give the same
// bits on every x86-64 ISA (SSE2, AVX2, AVX-512). normal_stream.cpp compiles
// the loops with the build's own flags and, on x86-64, also for AVX2 and
// AVX-512, and runs the widest kernel the CPU has: a baseline x86-64 build is
// as fast as a -march=native one and gives the same numbers.
//
// Accuracy (checked offline over every input; the tests check samples):
// log_f within 0.83 ulp of ln u for every float u in [2^−33, 1]; sin_f and
// cos_f within 2^−24 of sin α and cos α for every α used; each Z within
// 3 · 2^−24 · max(r, 1) of double-precision Box–Muller of the same float u and
// angle (1.4 · 10^7 word pairs sampled). The one coarser spot is r near 0: u is
// rounded to float, so 1 − u moves in steps of 2^−24 (u = 1 and r = 0 for the
// top 2^7 values of a) and r below 10^−3 takes values ≈ √(k · 2^−23), which
// moves the normal CDF by under 2^−24. So the Z are float-precision normals; a
// double output gets the same float value widened, then times sd in double.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace memcap {

/// Fourth counter word of the normal stream's Philox blocks ("NORM").
inline constexpr std::uint32_t kNormalTag = 0x4e4f524dU;

/// Writes Z_position … Z_{position+n−1} of `key`'s stream to `out`, each times
/// `sd` (in double; sd == 1 writes Z exactly).
void normal_stream_fill(std::uint64_t key, std::uint64_t position, float* out, std::size_t n, double sd = 1.0);
void normal_stream_fill(std::uint64_t key, std::uint64_t position, double* out, std::size_t n, double sd = 1.0);

/// The words r123::Engine<Philox4x32> under `key` hands out (Rng's scalar
/// draws): for the blocks b = first … first + count − 1, counter {b mod 2^32,
/// b >> 32, 0, 0}, each block's words w3, w2, w1, w0 in that order (the Engine
/// counts down), into out[0 .. 4·count). The Engine's first block is b = 1.
void engine_words(std::uint64_t key, std::uint64_t first, std::uint32_t* out, std::size_t count);

/// The scalar building blocks, used by the vectorised loops in normal_stream.cpp
/// (inlined there) and by the tests as the reference for single values.
namespace normal_detail {

/// The compiled forms of the fill loops. normal_stream_fill runs the widest one
/// the CPU has (avx512, avx2, build_target); all give the same bits, and the
/// tests compare each with the scalar route.
enum class Kernel {
    build_target,  // compiled with the build's own flags (its -march)
    avx2,          // x86-64 only: the loops compiled for AVX2
    avx512,        // x86-64 only: for AVX-512 F/DQ/VL/BW
};
bool kernel_available(Kernel k);
/// normal_stream_fill through kernel `k` (which must be available).
void fill_with(Kernel k, std::uint64_t key, std::uint64_t position, float* out, std::size_t n, double sd = 1.0);
void fill_with(Kernel k, std::uint64_t key, std::uint64_t position, double* out, std::size_t n, double sd = 1.0);
/// engine_words through kernel `k` (which must be available).
void engine_words_with(Kernel k, std::uint64_t key, std::uint64_t first, std::uint32_t* out, std::size_t count);

inline std::uint32_t float_bits(float x) {
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}
inline float bits_float(std::uint32_t b) {
    float x;
    std::memcpy(&x, &b, sizeof x);
    return x;
}

/// One Philox4x32-10 round on the counter words, then the Weyl key bump.
inline void philox_round(std::uint32_t& c0, std::uint32_t& c1, std::uint32_t& c2, std::uint32_t& c3, std::uint32_t k0,
                         std::uint32_t k1) {
    const std::uint64_t p0 = std::uint64_t{0xD2511F53U} * c0;
    const std::uint64_t p1 = std::uint64_t{0xCD9E8D57U} * c2;
    const auto n0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const auto n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<std::uint32_t>(p1);
    c3 = static_cast<std::uint32_t>(p0);
    c0 = n0;
    c2 = n2;
}

/// Philox4x32-10 of counter {c0, c1, c2, c3} under key {k0, k1}, in place.
inline void philox4x32_10(std::uint32_t& c0, std::uint32_t& c1, std::uint32_t& c2, std::uint32_t& c3, std::uint32_t k0,
                          std::uint32_t k1) {
#pragma GCC unroll 10
    for (int r = 0; r < 10; ++r) {
        philox_round(c0, c1, c2, c3, k0, k1);
        k0 += 0x9E3779B9U;
        k1 += 0xBB67AE85U;
    }
}

/// u = RN(w + 1/2) · 2^−32 ∈ [2^−33, 1]: the top 24 and low 8 bits are exact
/// floats, so their sum is rounded once.
inline float uniform_open0(std::uint32_t w) {
    const float hi = static_cast<float>(static_cast<std::int32_t>(w >> 8)) * 256.0f;
    const float lo = static_cast<float>(static_cast<std::int32_t>(w & 0xffU)) + 0.5f;
    return (hi + lo) * 2.3283064365386963e-10f;  // 2^-32
}

/// ln(1 + x) + fe · ln 2 for x in [√½ − 1, √2 − 1] (Cephes logf's degree-9
/// polynomial; ln 2 split into 0.693359375 − 2.12194440e−4).
inline float log_poly(float x, float fe) {
    const float z = x * x;
    float y = 7.0376836292e-2f;
    y = y * x + -1.1514610310e-1f;
    y = y * x + 1.1676998740e-1f;
    y = y * x + -1.2420140846e-1f;
    y = y * x + 1.4249322787e-1f;
    y = y * x + -1.6668057665e-1f;
    y = y * x + 2.0000714765e-1f;
    y = y * x + -2.4999993993e-1f;
    y = y * x + 3.3333331174e-1f;
    y = y * x * z;
    y = y + -2.12194440e-4f * fe;
    y = y + -0.5f * z;
    return (x + y) + 0.693359375f * fe;
}

/// Cephes logf's range reduction of a normal float u > 0: u = (1 + x) · 2^fe
/// with 1 + x in [√½, √2). Integer steps on the bits: m < √½ (mantissa below
/// 0x3504f3) doubles m by adding one to its exponent field.
inline void log_reduce(float u, float& x, float& fe) {
    const std::uint32_t bits = float_bits(u);
    const std::uint32_t mant = bits & 0x007fffffU;
    const std::uint32_t low = mant < 0x003504f3U ? 1U : 0U;  // m · 2^e with m ∈ [½, √½) → 2m · 2^(e−1)
    x = bits_float((mant | 0x3f000000U) + (low << 23)) - 1.0f;
    fe = static_cast<float>(static_cast<std::int32_t>(bits >> 23) - 126 - static_cast<std::int32_t>(low));
}

/// Natural log of a normal float u > 0.
inline float log_f(float u) {
    float x, fe;
    log_reduce(u, x, fe);
    return log_poly(x, fe);
}

/// sin α and cos α for 0 ≤ α ≤ π/4 (Cephes sinf/cosf polynomials).
inline float sin_f(float a) {
    const float z = a * a;
    float y = -1.9515295891e-4f;
    y = y * z + 8.3321608736e-3f;
    y = y * z + -1.6666654611e-1f;
    return a + (y * z) * a;
}
inline float cos_f(float a) {
    const float z = a * a;
    float y = 2.443315711809948e-5f;
    y = y * z + -1.388731625493765e-3f;
    y = y * z + 4.166664568298827e-2f;
    return (y * z * z - 0.5f * z) + 1.0f;
}

/// The Box–Muller pair from words (a, b): r cos φ and r sin φ (see the header).
/// The octant's reflection, swap and signs are integer operations on bits.
inline void box_muller(std::uint32_t a, std::uint32_t b, float& z_cos, float& z_sin) {
    const float r = std::sqrt(-2.0f * log_f(uniform_open0(a)));
    const std::uint32_t octant = b >> 29;
    const std::uint32_t t = ((b >> 6) & 0x7fffffU) ^ ((0U - (octant & 1U)) & 0x7fffffU);  // 2^23 − 1 − t in odd octants
    constexpr float step = 0.785398163397448309615f * 1.1920928955078125e-07f;  // RN(π/4) · 2^-23, exact scaling
    const float alpha = (static_cast<float>(static_cast<std::int32_t>(t)) + 0.5f) * step;
    const std::uint32_t s = float_bits(sin_f(alpha)), c = float_bits(cos_f(alpha));
    // φ = octant·π/4 + α (α reflected in odd octants): octants 1, 2, 5, 6 swap
    // sin and cos; cos φ < 0 in octants 2–5, sin φ < 0 in octants 4–7.
    const std::uint32_t swap = 0U - (((octant + 1U) >> 1) & 1U);
    const std::uint32_t cx = (s & swap) | (c & ~swap), sx = (c & swap) | (s & ~swap);
    const std::uint32_t neg_cos = (((octant + 2U) >> 2) & 1U) << 31, neg_sin = ((octant >> 2) & 1U) << 31;
    z_cos = r * bits_float(cx ^ neg_cos);
    z_sin = r * bits_float(sx ^ neg_sin);
}

}  // namespace normal_detail
}  // namespace memcap
