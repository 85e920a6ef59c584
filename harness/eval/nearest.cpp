// memcap/harness/eval/nearest.cpp — see nearest.hpp.
#include "harness/eval/nearest.hpp"

#include "core/simd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memcap {

namespace nearest_kernel {  // named, not anonymous: unity builds merge anonymous namespaces

// A tile is the register tile's shape (core/simd.hpp): simd::kTileRows reads by
// simd::kTileVectors vectors of 16 candidates.
constexpr int kRows = simd::kTileRows;
constexpr int kVectors = simd::kTileVectors;

/// Every lane's running minimum of the scores and the first column that reached it: lane l
/// sees the columns j ≡ l (mod 16) in increasing order and only a smaller score moves it, as
/// in the scan. The panel's padding scores +inf and never moves a lane.
template <int R>
struct Running {
    simd::Floats low[R];
    simd::Ints at[R];
};

/// The lowest column among the lanes holding the minimum (−0 == +0, as `<` treats them).
inline int lowest(const simd::Floats& low, const simd::Ints& at) {
#if defined(__AVX512F__)
    const __m512 l = reinterpret_cast<__m512>(low);
    const __mmask16 holds = _mm512_cmp_ps_mask(l, _mm512_set1_ps(_mm512_reduce_min_ps(l)), _CMP_EQ_OQ);
    return _mm512_mask_reduce_min_epi32(holds, reinterpret_cast<__m512i>(at));
#else
    float m = low[0];
    for (int l = 1; l < simd::kLanes; ++l) m = low[l] < m ? low[l] : m;
    std::int32_t best = std::numeric_limits<std::int32_t>::max();
    for (int l = 0; l < simd::kLanes; ++l)
        if (low[l] == m && at[l] < best) best = at[l];
    return best;
#endif
}

template <int R, int V>
inline void step(const float* const* rows, const CandidatePanel& p, Eigen::Index j0, Running<R>& run) {
    simd::Floats acc[R][V];
    simd::products<R, V>(rows, p.t.data() + j0, p.stride, p.d, acc);
    simd::Ints lane;
    for (int l = 0; l < simd::kLanes; ++l) simd::set_lane(lane, l, l);
    for (int v = 0; v < V; ++v) {
        const simd::Floats sq = simd::load(p.sq.data() + j0 + v * simd::kLanes);
        const simd::Ints index = lane + static_cast<std::int32_t>(j0 + v * simd::kLanes);
        for (int r = 0; r < R; ++r) {
            const simd::Floats x = sq - 2.0f * acc[r][v];
            const simd::Ints less = x < run.low[r];
            run.low[r] = simd::select(less, x, run.low[r]);
            run.at[r] = simd::select(less, index, run.at[r]);
        }
    }
}

template <int R>
void nearest_rows(ConstMatRef reads, Eigen::Index i0, const CandidatePanel& p, int* best) {
    const float* rows[R];
    Running<R> run;
    for (int r = 0; r < R; ++r) {
        rows[r] = reads.row(i0 + r).data();
        run.low[r] = simd::broadcast(std::numeric_limits<float>::infinity());
        run.at[r] = simd::Ints{};
    }
    Eigen::Index j0 = 0;
    for (; j0 + kVectors * simd::kLanes <= p.columns; j0 += kVectors * simd::kLanes) step<R, kVectors>(rows, p, j0, run);
    simd::with_count<kVectors - 1>((p.columns - j0) / simd::kLanes,
                                   [&](auto V) { step<R, decltype(V)::value>(rows, p, j0, run); });
    for (int r = 0; r < R; ++r) best[i0 + r] = lowest(run.low[r], run.at[r]);
}

/// The scan itself over score_dot's products: the rule every path gives, run for a read
/// whose scores may not be finite.
int scan(const float* r, const CandidatePanel& p, const RowMat& candidates) {
    const auto score = [&](Eigen::Index j) {
        return p.sq[static_cast<std::size_t>(j)] - 2.0f * score_dot(r, candidates.row(j).data(), p.d);
    };
    int best = 0;
    float low = score(0);
    for (Eigen::Index j = 1; j < p.n; ++j)
        if (const float x = score(j); x < low) low = x, best = static_cast<int>(j);
    return best;
}

/// The largest |x| of a row; +inf when any x is not finite (x · 0 is NaN for ±inf and NaN).
float max_abs(const float* x, Eigen::Index count) {
    float m = 0.0f, bad = 0.0f;
#pragma omp simd reduction(max : m) reduction(+ : bad)
    for (Eigen::Index k = 0; k < count; ++k) m = std::max(m, std::fabs(x[k])), bad += x[k] * 0.0f;
    return bad == 0.0f ? m : std::numeric_limits<float>::infinity();
}

}  // namespace nearest_kernel

void CandidatePanel::build(const RowMat& candidates) {
    n = candidates.rows(), d = candidates.cols();
    columns = (n + simd::kLanes - 1) / simd::kLanes * simd::kLanes;
    stride = columns % 128 == 0 ? columns + simd::kLanes : columns;  // rows 512 B apart or a multiple: the same cache sets
    t.resize(d, stride);
    simd::transpose(candidates.data(), n, d, d, t.data(), stride);
    if (columns > n) t.middleCols(n, columns - n).setZero();
    const Vec norms = candidates.rowwise().squaredNorm();
    sq.assign(static_cast<std::size_t>(columns), std::numeric_limits<float>::infinity());
    std::copy(norms.data(), norms.data() + n, sq.begin());
    max_sq = n > 0 ? static_cast<double>(norms.maxCoeff()) : 0.0;
}

float score_dot(const float* r, const float* c, Eigen::Index d) {
    float acc = 0.0f;
    for (Eigen::Index k = 0; k < d; ++k) acc = simd::madd(r[k], c[k], acc);
    return acc;
}

void nearest_candidates(ConstMatRef reads, const CandidatePanel& p, int* best) {
    namespace kernel = nearest_kernel;
    const Eigen::Index m = reads.rows();
    if (m == 0 || p.n == 0) return;
    Eigen::Index i0 = 0;
    constexpr int kRowsOne = simd::kTileRowsOneVector;
    if (p.columns == simd::kLanes)  // one vector of candidates: a taller tile keeps enough chains in flight
        for (; i0 + kRowsOne <= m; i0 += kRowsOne) kernel::nearest_rows<kRowsOne>(reads, i0, p, best);
    for (; i0 + kernel::kRows <= m; i0 += kernel::kRows) kernel::nearest_rows<kernel::kRows>(reads, i0, p, best);
    simd::with_count<kernel::kRows - 1>(m - i0, [&](auto R) { kernel::nearest_rows<decltype(R)::value>(reads, i0, p, best); });
    // Every score is finite, and the kernel's choice the scan's, when ‖r‖·‖c_j‖ stays far
    // inside the float range: |r·c| ≤ ‖r‖‖c‖ (to within d roundings) and ‖r‖² ≤ d·max|r_k|².
    // Reads beyond that (or candidates: max_sq inf) are decided by the scan.
    constexpr double kSafe = 1e72;
    const auto safe = [&](double max_abs_r) {
        return p.max_sq <= 1e37 && static_cast<double>(p.d) * max_abs_r * max_abs_r * p.max_sq <= kSafe;
    };
    float top = 0.0f;
    if (reads.outerStride() == reads.cols())  // one pass over the block: the rows are contiguous
        top = kernel::max_abs(reads.data(), m * reads.cols());
    else
        for (Eigen::Index i = 0; i < m; ++i) top = std::max(top, kernel::max_abs(reads.row(i).data(), reads.cols()));
    if (safe(top)) return;
    RowMat c(p.n, p.d);  // rows again, for the scan
    simd::transpose(p.t.data(), p.d, p.n, p.stride, c.data(), p.d);
    for (Eigen::Index i = 0; i < m; ++i)
        if (!safe(kernel::max_abs(reads.row(i).data(), reads.cols())))
            best[i] = kernel::scan(reads.row(i).data(), p, c);
}

void candidate_dots(ConstMatRef reads, const CandidatePanel& p, RowMat& dots) {
    thread_local RowMat padded;  // every column of the panel, the padding's included
    padded.resize(reads.rows(), p.columns);
    simd::product(reads.data(), reads.outerStride(), p.t.data(), p.stride, p.d, padded.data(), p.columns, reads.rows(),
                  p.columns);
    dots = padded.leftCols(p.n);
    if (padded.size() > (Eigen::Index{1} << 22)) padded.resize(0, 0);  // over 16 MiB: not kept between calls
}

}  // namespace memcap
