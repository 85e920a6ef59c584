// memcap/harness/eval/nearest.hpp — the scoring kernel: every read's nearest candidate.
//
// The readout scores a read r against the episode's candidates c_j by
//     s_j = ‖c_j‖² − 2 r·c_j        (= ‖r − c_j‖² − ‖r‖²),
// the nearest being the first j of the smallest s_j. The dot product has one definition,
// score_dot: a chain of fused multiply-adds over the components in index order,
//     acc = 0;  acc = fma(r_k, c_k, acc)  for k = 0, 1, …, d − 1
// (a multiply then an add where the build has no FMA). Every path computes it that way —
// the kernel below keeps sixteen candidates' chains side by side in the lanes of a vector,
// one lane per candidate, so each lane runs exactly the scalar chain — and so the kernel's
// choice is bit for bit the scan
//     best = 0;  for j = 1 … n − 1: if s_j < s_best then best = j
// over score_dot's products, at any vector width (tests/test_score_reads.cpp).
//
// The kernel (nearest_candidates) multiplies a tile of reads by candidates at a time in
// registers (core/simd.hpp's tile: four reads by 64 candidates with AVX-512, six by 16 with AVX2) and keeps each read's running minimum beside it, so the reads × n
// products never go to memory. It needs the candidates transposed (CandidatePanel, made
// once per episode and shared by every memory that reads it).
#pragma once

#include "core/types.hpp"

#include <cstdint>
#include <vector>

namespace memcap {

/// The candidates laid out for the kernel: `t` is d × stride, row k holding component k of
/// every candidate in its first `columns` entries (n rounded up to a multiple of 16; the
/// padding is 0; stride ≥ columns keeps rows off a multiple of 512 bytes apart), and `sq`
/// their squared norms, Eigen's rowwise squaredNorm (+inf in the padding, which so never
/// wins). `max_sq` is the largest of them.
struct CandidatePanel {
    Eigen::Index n = 0, d = 0, columns = 0, stride = 0;
    RowMat t;
    std::vector<float> sq;
    double max_sq = 0.0;

    void build(const RowMat& candidates);
    /// ‖c_j‖², as the panel was built with.
    const float* norms() const { return sq.data(); }
};

/// r·c as the readout scores it: fma(r_k, c_k, ·) over k in index order from 0.
float score_dot(const float* r, const float* c, Eigen::Index d);

/// best[i] = the first j minimising ‖c_j‖² − 2 score_dot(r_i, c_j), for every row i of
/// `reads` (d columns). A read whose products could overflow (‖r‖·‖c‖ near the float
/// range, where a score may be ±inf or NaN) is decided by the scan itself.
void nearest_candidates(ConstMatRef reads, const CandidatePanel& panel, int* best);

/// dots(i, j) = score_dot(r_i, c_j): the full products, for the tie rule.
void candidate_dots(ConstMatRef reads, const CandidatePanel& panel, RowMat& dots);

}  // namespace memcap
