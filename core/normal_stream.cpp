// memcap/core/normal_stream.cpp — see normal_stream.hpp.
//
// The two loops of normal_blocks run the scalar functions of normal_detail over
// a batch of Philox blocks; `#pragma omp simd` (the project builds with
// -fopenmp) lets the compiler run them in vector lanes. Vector lanes apply the
// same IEEE operations to each element as the scalar code, so the numbers do
// not depend on whether, or how wide, the loops are vectorised — nor on which
// of the kernels below runs them.
#include "core/normal_stream.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#if defined(__FAST_MATH__)
#error "core/normal_stream.cpp must not be built with -ffast-math: the normal stream's bits would change"
#endif

namespace memcap {
namespace {

#if defined(__GNUC__)
#define MEMCAP_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define MEMCAP_ALWAYS_INLINE inline
#endif

constexpr std::size_t kBatch = 256;  // Philox blocks per batch: 1024 normals, 4 KiB of words

/// Three spellings of the same integer function (Philox4x32-10), picked for the
/// code the compiler makes of them; integer results cannot depend on the ISA,
/// and the tests compare every kernel with Random123.
enum class Form {
    lanes32,  // normal_detail's 32-bit form: GCC vectorises the 32 × 32 → 64-bit products with pmuludq
    lanes64,  // 64-bit lanes throughout: with AVX-512DQ each 64 × 64-bit product is one vpmullq
    avx512,   // the AVX-512 kernels: eight blocks a 512-bit vector, each product one vpmuludq (below)
    avx2,     // the AVX2 kernels: the same in 256-bit vectors, four blocks each, two vectors a step
};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MEMCAP_NORMAL_KERNELS 1
// GCC 12's AVX-512 headers start some intrinsics from an undefined vector, which
// -Wmaybe-uninitialized reports wherever they are inlined (GCC bug 105593, fixed in 13).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
// GCC vectorises a loop in 256-bit vectors unless told otherwise (-mprefer-vector-width; its
// default for most CPUs that have AVX-512), so the AVX-512 kernels ask for 512-bit ones: the
// fill 1.37 ns a normal instead of 1.78 on an Intel Xeon with AVX-512 (the same bits). Clang
// has no such key in the target attribute (it would drop the whole attribute).
#define MEMCAP_AVX2 __attribute__((target("avx2")))
#if defined(__clang__)
#define MEMCAP_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))
#else
#define MEMCAP_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,prefer-vector-width=512")))
#endif

/// philox_blocks<Form::lanes64>'s integers, eight blocks a vector: every product is of two
/// 32-bit values, so vpmuludq (which multiplies the low 32 bits of each 64-bit lane, one µop)
/// gives it where GCC emits vpmullq (a full 64 × 64-bit product, three µops on Intel), and a
/// word is the low half of its lane whatever the high half holds (a product's high word is
/// moved down by swapping the halves; the stores keep the low halves): the fill 1.05 ns a
/// normal instead of 1.37 there. Returns the blocks done (whole vectors); the caller does the rest.
MEMCAP_AVX512 inline std::size_t philox_blocks_avx512(std::uint32_t k0, std::uint32_t k1, std::uint64_t first, std::size_t count,
                                               std::uint32_t* w0, std::uint32_t* w1, std::uint32_t* w2,
                                               std::uint32_t* w3, std::uint32_t tag) {
    const __m512i m0 = _mm512_set1_epi64(0xD2511F53LL), m1 = _mm512_set1_epi64(0xCD9E8D57LL),
                  lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    std::size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m512i b = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(first + i)), lanes);
        __m512i c0 = b, c1 = _mm512_shuffle_epi32(b, _MM_PERM_CDAB), c2 = _mm512_setzero_si512(),
                c3 = _mm512_set1_epi32(static_cast<int>(tag));
        std::uint32_t a = k0, e = k1;
        for (int r = 0; r < 10; ++r) {
            const __m512i p0 = _mm512_mul_epu32(c0, m0), p1 = _mm512_mul_epu32(c2, m1);
            c0 = _mm512_xor_si512(_mm512_xor_si512(_mm512_shuffle_epi32(p1, _MM_PERM_CDAB), c1),
                                  _mm512_set1_epi32(static_cast<int>(a)));
            c2 = _mm512_xor_si512(_mm512_xor_si512(_mm512_shuffle_epi32(p0, _MM_PERM_CDAB), c3),
                                  _mm512_set1_epi32(static_cast<int>(e)));
            c1 = p1;
            c3 = p0;
            a += 0x9E3779B9U;
            e += 0xBB67AE85U;
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(w0 + i), _mm512_cvtepi64_epi32(c0));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(w1 + i), _mm512_cvtepi64_epi32(c1));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(w2 + i), _mm512_cvtepi64_epi32(c2));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(w3 + i), _mm512_cvtepi64_epi32(c3));
    }
    return i;
}

/// philox_blocks_avx512's integers in 256-bit vectors: four blocks a vector, two vectors a step
/// (their chains independent, so one waits on its products while the other runs), and the low
/// halves of the lanes gathered by a permute for the stores (AVX2 has no vpmovqd). GCC's own
/// vectorisation of the 32-bit form spent most of the AVX2 fill on these words (2.7 of 4.2 ns
/// a normal on an AMD EPYC without AVX-512). Returns the blocks done (whole steps of eight).
MEMCAP_AVX2 inline std::size_t philox_blocks_avx2(std::uint32_t k0, std::uint32_t k1, std::uint64_t first, std::size_t count,
                                                  std::uint32_t* w0, std::uint32_t* w1, std::uint32_t* w2,
                                                  std::uint32_t* w3, std::uint32_t tag) {
    const __m256i m0 = _mm256_set1_epi64x(0xD2511F53LL), m1 = _mm256_set1_epi64x(0xCD9E8D57LL),
                  lanes = _mm256_setr_epi64x(0, 1, 2, 3), four = _mm256_set1_epi64x(4),
                  low_words = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    std::size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256i c0[2], c1[2], c2[2], c3[2];
        for (int h = 0; h < 2; ++h) {
            const __m256i b = _mm256_add_epi64(_mm256_set1_epi64x(static_cast<long long>(first + i)),
                                               h ? _mm256_add_epi64(lanes, four) : lanes);
            c0[h] = b, c1[h] = _mm256_shuffle_epi32(b, 0xB1), c2[h] = _mm256_setzero_si256(), c3[h] = _mm256_set1_epi32(static_cast<int>(tag));
        }
        std::uint32_t a = k0, e = k1;
        for (int r = 0; r < 10; ++r) {
            const __m256i av = _mm256_set1_epi32(static_cast<int>(a)), ev = _mm256_set1_epi32(static_cast<int>(e));
            for (int h = 0; h < 2; ++h) {
                const __m256i p0 = _mm256_mul_epu32(c0[h], m0), p1 = _mm256_mul_epu32(c2[h], m1);
                c0[h] = _mm256_xor_si256(_mm256_xor_si256(_mm256_shuffle_epi32(p1, 0xB1), c1[h]), av);
                c2[h] = _mm256_xor_si256(_mm256_xor_si256(_mm256_shuffle_epi32(p0, 0xB1), c3[h]), ev);
                c1[h] = p1;
                c3[h] = p0;
            }
            a += 0x9E3779B9U;
            e += 0xBB67AE85U;
        }
        // the low half of each lane (0xB1 above swaps a lane's halves: CDAB)
        for (int h = 0; h < 2; ++h) {
            std::uint32_t* const out[4] = {w0 + i + 4 * h, w1 + i + 4 * h, w2 + i + 4 * h, w3 + i + 4 * h};
            const __m256i words[4] = {c0[h], c1[h], c2[h], c3[h]};
            for (int k = 0; k < 4; ++k)
                _mm_storeu_si128(reinterpret_cast<__m128i*>(out[k]),
                                 _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(words[k], low_words)));
        }
    }
    return i;
}
#endif

/// w0..w3[i] = Philox4x32-10 of counter {b, b >> 32, 0, tag}, b = first + i.
template <Form form>
MEMCAP_ALWAYS_INLINE void philox_blocks(std::uint32_t k0, std::uint32_t k1, std::uint64_t first, std::size_t count,
                                        std::uint32_t* w0, std::uint32_t* w1, std::uint32_t* w2, std::uint32_t* w3,
                                        std::uint32_t tag = kNormalTag) {
    if constexpr (form == Form::avx512 || form == Form::avx2) {
#if defined(MEMCAP_NORMAL_KERNELS)
        const std::size_t done = form == Form::avx512 ? philox_blocks_avx512(k0, k1, first, count, w0, w1, w2, w3, tag)
                                                      : philox_blocks_avx2(k0, k1, first, count, w0, w1, w2, w3, tag);
        // the last blocks of a batch (fewer than a step's eight): the 32-bit form
        philox_blocks<Form::lanes32>(k0, k1, first + done, count - done, w0 + done, w1 + done, w2 + done, w3 + done, tag);
#endif
    } else if constexpr (form == Form::lanes64) {
#pragma omp simd
        for (std::size_t i = 0; i < count; ++i) {
            const std::uint64_t b = first + i;
            // every variable holds a 32-bit value; products of two fit in 64 bits
            std::uint64_t c0 = b & 0xffffffffU, c1 = b >> 32, c2 = 0, c3 = tag, a = k0, e = k1;
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
    } else {
#pragma omp simd
        for (std::size_t i = 0; i < count; ++i) {
            const std::uint64_t b = first + i;
            std::uint32_t c0 = static_cast<std::uint32_t>(b), c1 = static_cast<std::uint32_t>(b >> 32), c2 = 0,
                          c3 = tag;
            normal_detail::philox4x32_10(c0, c1, c2, c3, k0, k1);
            w0[i] = c0;
            w1[i] = c1;
            w2[i] = c2;
            w3[i] = c3;
        }
    }
}

/// z[0 .. 4·count) = Z_{4·first} … of the stream keyed {k0, k1}; count ≤ kBatch.
template <Form form>
MEMCAP_ALWAYS_INLINE void normal_blocks(std::uint32_t k0, std::uint32_t k1, std::uint64_t first, std::size_t count,
                                        float* z) {
    alignas(64) std::uint32_t w0[kBatch], w1[kBatch], w2[kBatch], w3[kBatch];
    philox_blocks<form>(k0, k1, first, count, w0, w1, w2, w3);
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

/// Z_position … Z_{position+n−1} times sd (in double) into out.
template <Form form, class T>
MEMCAP_ALWAYS_INLINE void fill(std::uint64_t key, std::uint64_t position, T* out, std::size_t n, double sd) {
    const auto k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
    alignas(64) float z[4 * kBatch];
    while (n > 0) {
        const std::size_t skip = static_cast<std::size_t>(position & 3U);  // only the first batch can start mid-block
        const std::size_t want = std::min(n + skip, 4 * kBatch);
        const std::size_t take = want - skip;
        bool copied = false;
        if constexpr (std::is_same_v<T, float>) {
            if (sd == 1.0 && skip == 0 && want % 4 == 0) {  // whole blocks: straight into out
                normal_blocks<form>(k0, k1, position >> 2, want / 4, out);
                copied = true;
            }
        }
        if (!copied) normal_blocks<form>(k0, k1, position >> 2, (want + 3) / 4, z);
        const float* src = z + skip;
        if constexpr (std::is_same_v<T, float>) {
            if (!copied && sd == 1.0) {
                std::memcpy(out, src, take * sizeof(float));
                copied = true;
            }
        }
        if (!copied) {
#pragma omp simd
            for (std::size_t i = 0; i < take; ++i) out[i] = static_cast<T>(sd * static_cast<double>(src[i]));
        }
        out += take;
        n -= take;
        position += take;
    }
}

/// out[4i .. 4i+3] = the words of the Engine's block first + i, in the Engine's order (w3, w2, w1, w0).
template <Form form>
MEMCAP_ALWAYS_INLINE void words(std::uint64_t key, std::uint64_t first, std::uint32_t* out, std::size_t count) {
    const auto k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
    alignas(64) std::uint32_t w0[kBatch], w1[kBatch], w2[kBatch], w3[kBatch];
    while (count > 0) {
        const std::size_t take = std::min(count, kBatch);
        philox_blocks<form>(k0, k1, first, take, w0, w1, w2, w3, 0);
#pragma omp simd
        for (std::size_t i = 0; i < take; ++i) {
            out[4 * i] = w3[i];
            out[4 * i + 1] = w2[i];
            out[4 * i + 2] = w1[i];
            out[4 * i + 3] = w0[i];
        }
        out += 4 * take;
        first += take;
        count -= take;
    }
}

/// One kernel's float and double fills, and its Engine words.
struct Fills {
    void (*f)(std::uint64_t, std::uint64_t, float*, std::size_t, double);
    void (*d)(std::uint64_t, std::uint64_t, double*, std::size_t, double);
    void (*w)(std::uint64_t, std::uint64_t, std::uint32_t*, std::size_t);
};

// The kernels: the same loops compiled for the build's target and, on x86-64,
// for AVX2 and for AVX-512 (picked at run time from the CPU: a baseline build
// runs as fast as a -march=native one, and the bits are the same either way).
#if defined(__AVX512DQ__)
constexpr Form kBuildForm = Form::lanes64;
#else
constexpr Form kBuildForm = Form::lanes32;
#endif
void fill_build_f(std::uint64_t key, std::uint64_t p, float* out, std::size_t n, double sd) {
    fill<kBuildForm>(key, p, out, n, sd);
}
void fill_build_d(std::uint64_t key, std::uint64_t p, double* out, std::size_t n, double sd) {
    fill<kBuildForm>(key, p, out, n, sd);
}
void words_build(std::uint64_t key, std::uint64_t first, std::uint32_t* out, std::size_t count) {
    words<kBuildForm>(key, first, out, count);
}

#if defined(MEMCAP_NORMAL_KERNELS)
MEMCAP_AVX2 void fill_avx2_f(std::uint64_t key, std::uint64_t p, float* out, std::size_t n, double sd) {
    fill<Form::avx2>(key, p, out, n, sd);
}
MEMCAP_AVX2 void fill_avx2_d(std::uint64_t key, std::uint64_t p, double* out, std::size_t n, double sd) {
    fill<Form::avx2>(key, p, out, n, sd);
}
MEMCAP_AVX2 void words_avx2(std::uint64_t key, std::uint64_t first, std::uint32_t* out, std::size_t count) {
    words<Form::avx2>(key, first, out, count);
}
MEMCAP_AVX512 void fill_avx512_f(std::uint64_t key, std::uint64_t p, float* out, std::size_t n, double sd) {
    fill<Form::avx512>(key, p, out, n, sd);
}
MEMCAP_AVX512 void fill_avx512_d(std::uint64_t key, std::uint64_t p, double* out, std::size_t n, double sd) {
    fill<Form::avx512>(key, p, out, n, sd);
}
MEMCAP_AVX512 void words_avx512(std::uint64_t key, std::uint64_t first, std::uint32_t* out, std::size_t count) {
    words<Form::avx512>(key, first, out, count);
}
#endif

Fills kernel(normal_detail::Kernel k) {
#if defined(MEMCAP_NORMAL_KERNELS)
    if (k == normal_detail::Kernel::avx512) return {fill_avx512_f, fill_avx512_d, words_avx512};
    if (k == normal_detail::Kernel::avx2) return {fill_avx2_f, fill_avx2_d, words_avx2};
#endif
    (void)k;
    return {fill_build_f, fill_build_d, words_build};
}

Fills best_kernel() {
    using normal_detail::Kernel;
    for (Kernel k : {Kernel::avx512, Kernel::avx2})
        if (normal_detail::kernel_available(k)) return kernel(k);
    return kernel(Kernel::build_target);
}

/// The widest kernel this CPU runs, chosen on first use.
const Fills& best() {
    static const Fills k = best_kernel();
    return k;
}

}  // namespace

bool normal_detail::kernel_available(Kernel k) {
#if defined(MEMCAP_NORMAL_KERNELS)
    __builtin_cpu_init();
#endif
    switch (k) {
    case Kernel::build_target:
        return true;
#if defined(MEMCAP_NORMAL_KERNELS)
    case Kernel::avx2:
        return __builtin_cpu_supports("avx2");
    case Kernel::avx512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
#endif
    default:
        return false;
    }
}

void normal_detail::fill_with(Kernel k, std::uint64_t key, std::uint64_t position, float* out, std::size_t n,
                              double sd) {
    kernel(k).f(key, position, out, n, sd);
}
void normal_detail::fill_with(Kernel k, std::uint64_t key, std::uint64_t position, double* out, std::size_t n,
                              double sd) {
    kernel(k).d(key, position, out, n, sd);
}

void normal_detail::engine_words_with(Kernel k, std::uint64_t key, std::uint64_t first, std::uint32_t* out,
                                      std::size_t count) {
    kernel(k).w(key, first, out, count);
}

void engine_words(std::uint64_t key, std::uint64_t first, std::uint32_t* out, std::size_t count) {
    best().w(key, first, out, count);
}

void normal_stream_fill(std::uint64_t key, std::uint64_t position, float* out, std::size_t n, double sd) {
    best().f(key, position, out, n, sd);
}
void normal_stream_fill(std::uint64_t key, std::uint64_t position, double* out, std::size_t n, double sd) {
    best().d(key, position, out, n, sd);
}

}  // namespace memcap
