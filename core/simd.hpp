// memcap/core/simd.hpp — sixteen floats as one value, and the register tile of products
// that the readout's scoring kernel (harness/eval/nearest.cpp) and the delta rule's
// chunked writes (memories/delta/delta_grid.cpp) are built from.
//
// Floats is sixteen floats: with AVX-512 a GCC vector type, one zmm register; without it
// a struct of the vectors the build has (two ymm with AVX2, four xmm with SSE2), each
// operation done on each part — a 64-byte GCC vector type there has no register of its
// own, so GCC kept every Floats in memory and copied it through general registers at each
// operation (the register tile ran at a tenth of its speed on an AMD EPYC with AVX2). The
// build's own width, never assumed by the code: kernels use the operations below (+, −, ×,
// unary −, <, select, reading a lane with [] and writing one with set_lane, madd, broadcast,
// load, store; for Ints also + an int and |=), which mean the same on either form. Every
// product below is a chain of fused multiply-adds in index order, one chain per lane
// (a multiply then an add where the build has no FMA), so each lane computes exactly
// what the scalar madd chain computes, at any vector width.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace memcap::simd {

constexpr int kLanes = 16;
#if defined(__AVX512F__)
using Floats = float __attribute__((vector_size(4 * kLanes)));
using Ints = std::int32_t __attribute__((vector_size(4 * kLanes)));

/// Lane l of the result is a's where mask's lane l is nonzero (true: −1), else b's.
inline Floats select(Ints mask, Floats a, Floats b) { return mask ? a : b; }
inline Ints select(Ints mask, Ints a, Ints b) { return mask ? a : b; }
template <class V, class T>
inline void set_lane(V& v, int l, T x) { v[l] = x; }
#else
#if defined(__AVX__)
constexpr int kPartLanes = 8;  // a ymm register
#else
constexpr int kPartLanes = 4;  // an xmm register
#endif
constexpr int kParts = kLanes / kPartLanes;
using FloatPart = float __attribute__((vector_size(4 * kPartLanes)));
using IntPart = std::int32_t __attribute__((vector_size(4 * kPartLanes)));

/// Sixteen lanes as kParts register-wide vectors; lane l is part l / kPartLanes's lane l % kPartLanes.
template <class T, class Part>
struct Lanes16 {
    Part part[kParts];
    T operator[](int l) const { return part[l / kPartLanes][l % kPartLanes]; }
    void set(int l, T x) { part[l / kPartLanes][l % kPartLanes] = x; }
    /// {f(0), …, f(kParts − 1)}: one expression a part, no loop (a loop over the parts kept
    /// the value in memory).
    template <class F>
    static Lanes16 each(F&& f) {
        return each(f, std::make_integer_sequence<int, kParts>{});
    }
    template <class F, int... I>
    static Lanes16 each(F& f, std::integer_sequence<int, I...>) {
        return Lanes16{{f(I)...}};
    }
};
using Floats = Lanes16<float, FloatPart>;
using Ints = Lanes16<std::int32_t, IntPart>;

inline Floats operator+(Floats a, Floats b) { return Floats::each([&](int i) { return a.part[i] + b.part[i]; }); }
inline Floats operator-(Floats a, Floats b) { return Floats::each([&](int i) { return a.part[i] - b.part[i]; }); }
inline Floats operator*(Floats a, Floats b) { return Floats::each([&](int i) { return a.part[i] * b.part[i]; }); }
inline Floats operator*(float s, Floats a) { return Floats::each([&](int i) { return s * a.part[i]; }); }
inline Floats operator*(Floats a, float s) { return Floats::each([&](int i) { return a.part[i] * s; }); }
inline Floats operator-(Floats a) { return Floats::each([&](int i) { return -a.part[i]; }); }
inline Ints operator<(Floats a, Floats b) { return Ints::each([&](int i) { return a.part[i] < b.part[i]; }); }
inline Ints operator+(Ints a, std::int32_t s) { return Ints::each([&](int i) { return a.part[i] + s; }); }
inline Ints& operator|=(Ints& a, Ints b) { return a = Ints::each([&](int i) { return a.part[i] | b.part[i]; }); }
inline Floats select(Ints mask, Floats a, Floats b) {
    return Floats::each([&](int i) { return mask.part[i] ? a.part[i] : b.part[i]; });
}
inline Ints select(Ints mask, Ints a, Ints b) {
    return Ints::each([&](int i) { return mask.part[i] ? a.part[i] : b.part[i]; });
}
template <class V, class T>
inline void set_lane(V& v, int l, T x) { v.set(l, x); }
#endif

/// a·b + c rounded once (FMA), or a·b rounded then + c without FMA (-ffp-contract=off).
inline float madd(float a, float b, float c) {
#if defined(__FMA__)
    return std::fma(a, b, c);
#else
    return a * b + c;
#endif
}

inline Floats madd(Floats a, Floats b, Floats c) {
#if defined(__AVX512F__)
    return reinterpret_cast<Floats>(
        _mm512_fmadd_ps(reinterpret_cast<__m512>(a), reinterpret_cast<__m512>(b), reinterpret_cast<__m512>(c)));
#elif defined(__FMA__)
    return Floats::each([&](int i) {
        return reinterpret_cast<FloatPart>(_mm256_fmadd_ps(reinterpret_cast<__m256>(a.part[i]), reinterpret_cast<__m256>(b.part[i]),
                                                           reinterpret_cast<__m256>(c.part[i])));
    });
#else
    return a * b + c;
#endif
}

inline Floats broadcast(float x) {
#if defined(__AVX512F__)
    return reinterpret_cast<Floats>(_mm512_set1_ps(x));
#elif defined(__AVX__)
    const FloatPart p = reinterpret_cast<FloatPart>(_mm256_set1_ps(x));
    return Floats::each([&](int) { return p; });
#else
    const FloatPart p = {x, x, x, x};
    return Floats::each([&](int) { return p; });
#endif
}

inline Floats load(const float* p) {
#if defined(__AVX512F__)
    Floats v;
    std::memcpy(&v, p, sizeof v);
    return v;
#else
    return Floats::each([&](int i) {  // a load a part: one copy of the whole went through the stack
        FloatPart x;
        std::memcpy(&x, p + i * kPartLanes, sizeof x);
        return x;
    });
#endif
}

inline void store(float* p, const Floats& v) {
#if defined(__AVX512F__)
    std::memcpy(p, &v, sizeof v);
#else
    for (int i = 0; i < kParts; ++i) std::memcpy(p + i * kPartLanes, &v.part[i], sizeof v.part[i]);
#endif
}

/// The sixteen lanes of v summed as a tree in a fixed order (the halves, then the quarters, then
/// lanes 0 + 2 and 1 + 3, then those two): the same bits in every form of Floats.
[[gnu::always_inline]] inline float lane_sum(Floats v) {
    using F8 = float __attribute__((vector_size(32)));
    using F4 = float __attribute__((vector_size(16)));
    static_assert(kLanes == 16);
    F8 lo8, hi8;
#if !defined(__AVX512F__) && defined(__AVX__)
    lo8 = v.part[0], hi8 = v.part[1];  // the two ymm parts, in registers
#else
    std::memcpy(&lo8, &v, sizeof lo8);  // the vector type's halves, or the four xmm parts two by two
    std::memcpy(&hi8, reinterpret_cast<const char*>(&v) + sizeof lo8, sizeof hi8);
#endif
    const F8 s8 = lo8 + hi8;
    F4 lo4, hi4;
    std::memcpy(&lo4, &s8, sizeof lo4);
    std::memcpy(&hi4, reinterpret_cast<const char*>(&s8) + sizeof lo4, sizeof hi4);
    const F4 s4 = lo4 + hi4;
    const float s2[2] = {s4[0] + s4[2], s4[1] + s4[3]};
    return s2[0] + s2[1];
}

/// Whether all `count` floats at `p` are ±0 (a NaN is not): every bit but the signs,
/// or-ed together, in vectors — what Eigen's isZero(0) decides, without its per-entry
/// branch.
inline bool all_zero(const float* p, std::int64_t count) {
    Ints bits{};
    std::int64_t k = 0;
    for (; k + kLanes <= count; k += kLanes) {
        Ints v;
        std::memcpy(&v, p + k, sizeof v);
        bits |= v;
    }
    std::int32_t rest = 0;
    for (int l = 0; l < kLanes; ++l) rest |= bits[l];
    for (; k < count; ++k) {
        std::int32_t v;
        std::memcpy(&v, p + k, sizeof v);
        rest |= v;
    }
    return (rest & 0x7fffffff) == 0;
}

/// The register tile: acc[r][v] lane l = Σ_k rows[r][k·step] · panel[k·stride + 16v + l],
/// the madd chain over k = 0 … depth − 1 starting from 0, or from
/// init[r·init_stride + 16v + l] when `init` is given. R rows of the left side (their
/// entries `step` floats apart: 1 for a row, the row length for a column) by V vectors of
/// the panel's columns.
template <int R, int V>
inline void products(const float* const* rows, const float* panel, std::int64_t stride, std::int64_t depth,
                     Floats (&acc)[R][V], const float* init = nullptr, std::int64_t init_stride = 0,
                     std::int64_t step = 1) {
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < V; ++v) acc[r][v] = init ? load(init + r * init_stride + v * kLanes) : Floats{};
    for (std::int64_t k = 0; k < depth; ++k) {
        const float* p = panel + k * stride;
        Floats c[V];
        for (int v = 0; v < V; ++v) c[v] = load(p + v * kLanes);
        for (int r = 0; r < R; ++r) {
            const Floats a = broadcast(rows[r][k * step]);
            for (int v = 0; v < V; ++v) acc[r][v] = madd(a, c[v], acc[r][v]);
        }
    }
}

/// Transposes the 16 × 16 tile whose rows are x[0..15] (x[k] lane l becomes x[l] lane k):
/// with AVX-512, four rounds of swapping the off-diagonal s × s blocks, s = 8, 4, 2, 1, one
/// two-register permute per row; otherwise lane by lane.
inline void transpose16(Floats (&x)[kLanes]) {
#if defined(__AVX512F__)
    const auto round = [&](int s, __m512i low, __m512i high) {
        for (int i = 0; i < kLanes; ++i)
            if (!(i & s)) {
                const __m512 a = reinterpret_cast<__m512>(x[i]), b = reinterpret_cast<__m512>(x[i + s]);
                x[i] = reinterpret_cast<Floats>(_mm512_permutex2var_ps(a, low, b));
                x[i + s] = reinterpret_cast<Floats>(_mm512_permutex2var_ps(a, high, b));
            }
    };
    // lanes of (a, b) as 0–15 from a, 16–31 from b: low l = l & s ? 16 + l − s : l,
    // high l = l & s ? 16 + l : l + s
    round(8, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23),
          _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
    round(4, _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27),
          _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31));
    round(2, _mm512_setr_epi32(0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29),
          _mm512_setr_epi32(2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31));
    round(1, _mm512_setr_epi32(0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30),
          _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31));
#else
    Floats t[kLanes];
    for (int k = 0; k < kLanes; ++k)
        for (int l = 0; l < kLanes; ++l) set_lane(t[l], k, x[k][l]);
    for (int l = 0; l < kLanes; ++l) x[l] = t[l];
#endif
}

/// dst (cols × rows, rows `dst_stride` floats apart) = the transpose of src (rows × cols,
/// rows `src_stride` apart): 16 × 16 tiles through transpose16, the edges entry by entry.
inline void transpose(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t src_stride, float* dst,
                      std::int64_t dst_stride) {
    const std::int64_t full_rows = rows - rows % kLanes, full_cols = cols - cols % kLanes;
    for (std::int64_t i0 = 0; i0 < full_rows; i0 += kLanes)
        for (std::int64_t k0 = 0; k0 < full_cols; k0 += kLanes) {
            Floats x[kLanes];
            for (int i = 0; i < kLanes; ++i) x[i] = load(src + (i0 + i) * src_stride + k0);
            transpose16(x);
            for (int k = 0; k < kLanes; ++k) store(dst + (k0 + k) * dst_stride + i0, x[k]);
        }
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t k = i < full_rows ? full_cols : 0; k < cols; ++k) dst[k * dst_stride + i] = src[i * src_stride + k];
}

/// The register tile's shape for this build's vector registers. A tile of R rows by V
/// vectors keeps R·V sums, V vectors of the panel and one broadcast entry in registers while
/// its chains run: with AVX-512 (32 registers, a Floats in one) 4 × 4, or 8 × 1 one vector
/// wide; with AVX (16 registers, a Floats in two) 6 × 1 — 15 registers; 4 × 4 spills its
/// sums at every madd —; with SSE (16 registers, a Floats in four) 2 × 1. Tuning only: every
/// entry is the same madd chain whatever the tile, so the same bits (docs/performance.md has
/// the measurements).
#if defined(__AVX512F__)
constexpr int kTileRows = 4, kTileVectors = 4, kTileRowsOneVector = 8;
#elif defined(__AVX__)
constexpr int kTileRows = 6, kTileVectors = 1, kTileRowsOneVector = 6;
#else
constexpr int kTileRows = 2, kTileVectors = 1, kTileRowsOneVector = 2;
#endif

/// f(std::integral_constant<int, n>{}) for a run-time 1 ≤ n ≤ N; nothing for n outside.
template <int N, class F>
inline void with_count(std::int64_t n, F&& f) {
    if constexpr (N > 0) {
        if (n == N) f(std::integral_constant<int, N>{});
        else with_count<N - 1>(n, f);
    }
}

/// Calls f(R, V, i0, v0) for tiles covering `rows` rows by `vectors` vectors of 16 columns
/// — R, V as std::integral_constant: kTileRows × kTileVectors where they fit, narrower at
/// the edges, and kTileRowsOneVector × 1 when `vectors` is 1 (a tile keeps enough
/// independent chains in flight for the FMA units' latency either way) — row tiles outer,
/// column tiles inner.
template <class F>
inline void for_each_tile(std::int64_t rows, std::int64_t vectors, F&& f) {
    using std::integral_constant;
    const auto row_tile = [&](auto R, std::int64_t i0) {
        std::int64_t v0 = 0;
        for (; v0 + kTileVectors <= vectors; v0 += kTileVectors) f(R, integral_constant<int, kTileVectors>{}, i0, v0);
        with_count<kTileVectors - 1>(vectors - v0, [&](auto V) { f(R, V, i0, v0); });
    };
    std::int64_t i0 = 0;
    if (vectors == 1)
        for (; i0 + kTileRowsOneVector <= rows; i0 += kTileRowsOneVector)
            f(integral_constant<int, kTileRowsOneVector>{}, integral_constant<int, 1>{}, i0, std::int64_t{0});
    for (; i0 + kTileRows <= rows; i0 += kTileRows) row_tile(integral_constant<int, kTileRows>{}, i0);
    with_count<kTileRows - 1>(rows - i0, [&](auto R) { row_tile(R, i0); });
}

/// The blocks a large product is cut into (multiply): a panel of b at most kPanelCols
/// columns wide and kPanelFloats / that many rows deep (at least kMinBlockDepth) — 256 KB,
/// inside the L2 cache of any current core — so the row tiles read it from L2 instead of
/// streaming all of b from memory once per row tile. A product whose whole b fits in
/// a panel is not cut. Tuning only: the entries' bits do not depend on these numbers.
constexpr std::int64_t kPanelFloats = 65536;
constexpr std::int64_t kPanelCols = 1024;  // a multiple of kLanes
constexpr std::int64_t kMinBlockDepth = 64;

/// c = a b over the register tiles, with a's entry (r, i) at a[r·a_row + i·a_step]: a row-major
/// rows × depth left side (a_row = its stride, a_step = 1) or the transpose of a row-major
/// depth × rows one (a_row = 1, a_step = its stride), read in place either way. b is
/// depth × cols (`b_stride`), c rows × cols (`c_stride`), cols a multiple of 16. Entry (r, j)
/// is the madd chain Σ_i a_ri b_ij in i, from c_rj when `accumulate`, else from 0.
/// A large product runs panel by panel (kPanelFloats): the depth in blocks, each block's sums
/// stored in c and taken up again by the next, so every entry is still one madd chain in i —
/// the same bits as uncut (a float stored and loaded is the same float; tests/test_simd.cpp),
/// the right side read from L2 instead of memory (docs/performance.md has the gain).
inline void multiply(const float* a, std::int64_t a_row, std::int64_t a_step, const float* b, std::int64_t b_stride,
                     std::int64_t depth, float* c, std::int64_t c_stride, std::int64_t rows, std::int64_t cols,
                     bool accumulate) {
    // columns j0 … j0 + width − 1 of c, the chain's terms i = k0 … k0 + count − 1, from c or from 0
    const auto block = [&](std::int64_t j0, std::int64_t width, std::int64_t k0, std::int64_t count, bool from_c) {
        for_each_tile(rows, width / kLanes, [&](auto R_, auto V_, std::int64_t r0, std::int64_t v0) {
            constexpr int R = decltype(R_)::value, V = decltype(V_)::value;
            const float* left[R];
            for (int r = 0; r < R; ++r) left[r] = a + (r0 + r) * a_row + k0 * a_step;
            float* at = c + r0 * c_stride + j0 + v0 * kLanes;
            Floats acc[R][V];
            products<R, V>(left, b + k0 * b_stride + j0 + v0 * kLanes, b_stride, count, acc, from_c ? at : nullptr,
                           c_stride, a_step);
            for (int r = 0; r < R; ++r)
                for (int v = 0; v < V; ++v) store(at + r * c_stride + v * kLanes, acc[r][v]);
        });
    };
    if (depth * cols <= kPanelFloats) return block(0, cols, 0, depth, accumulate);
    const std::int64_t panel_cols = cols < kPanelCols ? cols : kPanelCols;
    const std::int64_t panel_depth = kPanelFloats / panel_cols > kMinBlockDepth ? kPanelFloats / panel_cols : kMinBlockDepth;
    for (std::int64_t j0 = 0; j0 < cols; j0 += panel_cols) {
        const std::int64_t width = cols - j0 < panel_cols ? cols - j0 : panel_cols;
        for (std::int64_t k0 = 0; k0 < depth; k0 += panel_depth)
            block(j0, width, k0, depth - k0 < panel_depth ? depth - k0 : panel_depth, accumulate || k0 > 0);
    }
}

/// c = a b: a is rows × depth (`a_stride`); see multiply.
inline void product(const float* a, std::int64_t a_stride, const float* b, std::int64_t b_stride, std::int64_t depth,
                    float* c, std::int64_t c_stride, std::int64_t rows, std::int64_t cols) {
    multiply(a, a_stride, 1, b, b_stride, depth, c, c_stride, rows, cols, false);
}

/// c += aᵀ b (or c = aᵀ b when !accumulate): a is depth × rows (`a_stride`), its columns read
/// in place; see multiply. The outer-product sums of the grids' writes (Σ_i v_i φ_iᵀ) and of
/// HRR's direct form (Kᵀ V), with neither side packed or transposed.
inline void add_transposed_product(const float* a, std::int64_t a_stride, const float* b, std::int64_t b_stride,
                                   std::int64_t depth, float* c, std::int64_t c_stride, std::int64_t rows,
                                   std::int64_t cols, bool accumulate = true) {
    multiply(a, 1, a_stride, b, b_stride, depth, c, c_stride, rows, cols, accumulate);
}

}  // namespace memcap::simd
