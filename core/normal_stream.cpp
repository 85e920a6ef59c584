// memcap/core/normal_stream.cpp — see normal_stream.hpp.
//
// The two loops below run the scalar functions of normal_detail over a batch
// of Philox blocks; `#pragma omp simd` (the project builds with -fopenmp) lets
// the compiler run them in vector lanes. Vector lanes apply the same IEEE
// operations to each element as the scalar code, so the numbers do not depend
// on whether, or how wide, the loops are vectorised.
#include "core/normal_stream.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#if defined(__FAST_MATH__)
#error "core/normal_stream.cpp must not be built with -ffast-math: the normal stream's bits would change"
#endif

namespace memcap {
namespace {

constexpr std::size_t kBatch = 256;  // Philox blocks per batch: 1024 normals, 4 KiB of words

/// w0..w3[i] = Philox4x32-10 of counter {b, b >> 32, 0, kNormalTag}, b = first + i.
///
/// Two spellings of the same integer function, picked for the code the compiler
/// makes of them (integer results cannot depend on the ISA; the tests compare
/// both with Random123): with AVX-512DQ, 64-bit lanes throughout, whose
/// 64 × 64-bit multiplies become one vpmullq each; otherwise normal_detail's
/// 32-bit form, which GCC vectorises with pmuludq.
void philox_blocks(std::uint32_t k0, std::uint32_t k1, std::uint64_t first, std::size_t count, std::uint32_t* w0,
                   std::uint32_t* w1, std::uint32_t* w2, std::uint32_t* w3) {
#if defined(__AVX512DQ__)
#pragma omp simd
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint64_t b = first + i;
        // every variable holds a 32-bit value; products of two fit in 64 bits
        std::uint64_t c0 = b & 0xffffffffU, c1 = b >> 32, c2 = 0, c3 = kNormalTag, a = k0, e = k1;
#pragma GCC unroll 10
        for (int r = 0; r < 10; ++r) {
            const std::uint64_t p0 = std::uint64_t{0xD2511F53U} * c0, p1 = std::uint64_t{0xCD9E8D57U} * c2;
            c0 = (p1 >> 32) ^ c1 ^ a;
            c2 = (p0 >> 32) ^ c3 ^ e;
            c1 = p1 & 0xffffffffU;
            c3 = p0 & 0xffffffffU;
            a = (a + 0x9E3779B9U) & 0xffffffffU;
            e = (e + 0xBB67AE85U) & 0xffffffffU;
        }
        w0[i] = static_cast<std::uint32_t>(c0);
        w1[i] = static_cast<std::uint32_t>(c1);
        w2[i] = static_cast<std::uint32_t>(c2);
        w3[i] = static_cast<std::uint32_t>(c3);
    }
#else
#pragma omp simd
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint64_t b = first + i;
        std::uint32_t c0 = static_cast<std::uint32_t>(b), c1 = static_cast<std::uint32_t>(b >> 32), c2 = 0,
                      c3 = kNormalTag;
        normal_detail::philox4x32_10(c0, c1, c2, c3, k0, k1);
        w0[i] = c0;
        w1[i] = c1;
        w2[i] = c2;
        w3[i] = c3;
    }
#endif
}

/// z[0 .. 4·count) = Z_{4·first} … of the stream keyed {k0, k1}.
void normal_blocks(std::uint32_t k0, std::uint32_t k1, std::uint64_t first, std::size_t count, float* z) {
    alignas(64) std::uint32_t w0[kBatch], w1[kBatch], w2[kBatch], w3[kBatch];
    philox_blocks(k0, k1, first, count, w0, w1, w2, w3);
#pragma omp simd
    for (std::size_t i = 0; i < count; ++i) {
        float a, b, c, d;
        normal_detail::box_muller(w0[i], w1[i], a, b);
        normal_detail::box_muller(w2[i], w3[i], c, d);
        z[4 * i] = a;
        z[4 * i + 1] = b;
        z[4 * i + 2] = c;
        z[4 * i + 3] = d;
    }
}

template <class T>
void fill(std::uint64_t key, std::uint64_t position, T* out, std::size_t n, double sd) {
    const auto k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
    alignas(64) float z[4 * kBatch];
    while (n > 0) {
        const std::size_t skip = static_cast<std::size_t>(position & 3U);  // only the first batch can start mid-block
        const std::size_t want = std::min(n + skip, 4 * kBatch);
        normal_blocks(k0, k1, position >> 2, (want + 3) / 4, z);
        const std::size_t take = want - skip;
        const float* src = z + skip;
        if (std::is_same_v<T, float> && sd == 1.0) {
            std::memcpy(out, src, take * sizeof(float));
        } else {
#pragma omp simd
            for (std::size_t i = 0; i < take; ++i) out[i] = static_cast<T>(sd * static_cast<double>(src[i]));
        }
        out += take;
        n -= take;
        position += take;
    }
}

}  // namespace

void normal_stream_fill(std::uint64_t key, std::uint64_t position, float* out, std::size_t n, double sd) {
    fill(key, position, out, n, sd);
}
void normal_stream_fill(std::uint64_t key, std::uint64_t position, double* out, std::size_t n, double sd) {
    fill(key, position, out, n, sd);
}

}  // namespace memcap
