// score_reads (harness/eval/readout.cpp) against the plain formulas it stands for, bit for
// bit: the nearest candidate by a scan `if (s_j < best) best = j` over
// s_j = ‖c_j‖² − 2 r·c_j, with r·c one chain of fused multiply-adds in index order (the
// readout's one definition of the dot product, harness/eval/nearest.hpp), and the
// target's distance and cosine through Eigen's float/double norms and dot. score_reads
// finds the same index with a register-tiled kernel and the cosine's three double sums in
// one pass; every CSV byte depends on it giving the same numbers, so these are compared
// with ==, not a tolerance.
#include "core/rng.hpp"
#include "harness/eval/nearest.hpp"
#include "harness/eval/readout.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace memcap;

namespace {

/// r·c written out: acc = fma(r_k, c_k, acc) from 0 (a multiply and an add without FMA).
float chain_dot(const RowMat& a, Eigen::Index i, const RowMat& b, Eigen::Index j) {
    float acc = 0.0f;
    for (Eigen::Index k = 0; k < a.cols(); ++k) {
#if defined(__FMA__)
        acc = std::fma(a(i, k), b(j, k), acc);
#else
        acc = a(i, k) * b(j, k) + acc;
#endif
    }
    return acc;
}

int scan(const RowMat& reads, Eigen::Index i, const RowMat& candidates) {
    const Vec sq = candidates.rowwise().squaredNorm();
    int best = 0;
    float best_score = sq(0) - 2.0f * chain_dot(reads, i, candidates, 0);
    for (Eigen::Index j = 1; j < candidates.rows(); ++j) {
        const float s = sq(j) - 2.0f * chain_dot(reads, i, candidates, j);
        if (s < best_score) best_score = s, best = static_cast<int>(j);
    }
    return best;
}

/// The reference: score_reads as a scalar loop with Eigen's reductions.
std::vector<SlotScore> reference(const Episode& e, const RowMat& reads, std::vector<int>& best_of) {
    std::vector<SlotScore> by_slot;
    best_of.clear();
    for (Eigen::Index i = 0; i < reads.rows(); ++i) {
        const int best = scan(reads, i, e.candidates);
        best_of.push_back(best);
        const int target = e.target[static_cast<std::size_t>(i)], slot = e.slot[static_cast<std::size_t>(i)];
        if (static_cast<std::size_t>(slot + 1) >= by_slot.size()) by_slot.resize(static_cast<std::size_t>(slot + 2));
        SlotScore& s = by_slot[static_cast<std::size_t>(slot + 1)];
        s.slot = slot, s.queries += 1, s.correct += (best == target);
        const float dist = (reads.row(i) - e.candidates.row(target)).norm();
        s.target_dist_sum += std::isfinite(dist) ? double(dist)
                                                 : (reads.row(i).cast<double>() - e.candidates.row(target).cast<double>()).norm();
        const double norms = reads.row(i).cast<double>().norm() * e.candidates.row(target).cast<double>().norm();
        s.target_cos_sum += norms > 0.0 ? reads.row(i).cast<double>().dot(e.candidates.row(target).cast<double>()) / norms : 0.0;
    }
    return by_slot;
}

Episode episode(Rng& rng, Eigen::Index n, Eigen::Index queries, int d) {
    Episode e;
    e.candidates.resize(n, d);
    rng.fill_normal(e.candidates);
    e.target.resize(static_cast<std::size_t>(queries));
    rng.below(n, e.target.data(), e.target.size());
    e.slot.assign(e.target.size(), -1);
    return e;
}

void require_same(const Episode& e, const RowMat& reads) {
    std::vector<int> best;
    const std::vector<SlotScore> want = reference(e, reads, best);
    std::vector<SlotScore> got;
    std::vector<Decision> decisions;
    score_reads(e, reads, got, 0, &decisions);
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
        CHECK(got[k].queries == want[k].queries);
        CHECK(got[k].correct == want[k].correct);
        CHECK(got[k].target_dist_sum == want[k].target_dist_sum);  // bit for bit
        CHECK(got[k].target_cos_sum == want[k].target_cos_sum);
    }
    REQUIRE(decisions.size() == best.size());
    for (std::size_t i = 0; i < best.size(); ++i) {
        CHECK((decisions[i].kind == Decision::PresentRight) == (best[i] == e.target[i]));
        const float dot = chain_dot(reads, static_cast<Eigen::Index>(i), e.candidates, best[i]);
        CHECK((std::isnan(dot) ? std::isnan(decisions[i].statistic) : decisions[i].statistic == dot));
    }
}

}  // namespace

TEST_CASE("score_reads gives the bits of the scalar scan over the FMA chain and Eigen's reductions", "[readout][score]") {
    Rng rng = Rng::stream("test/score_reads");
    for (const int d : {1, 7, 64, 100}) {
        for (const Eigen::Index n : {1, 2, 5, 16, 17, 64, 80, 113, 513}) {
            CAPTURE(d, n);
            const Episode e = episode(rng, n, 41, d);  // 41 reads: whole tiles and a partial one
            RowMat reads(41, d);
            rng.fill_normal(reads, 0.3);
            for (Eigen::Index i = 0; i < reads.rows(); i += 3)  // some reads near their target
                reads.row(i) += e.candidates.row(e.target[static_cast<std::size_t>(i)]);
            require_same(e, reads);
        }
    }
}

TEST_CASE("score_reads at every read count up to 13: each tile shape's partial tiles", "[readout][score]") {
    // the tile is 4 (8 one vector wide) reads with AVX-512, 6 with AVX2, 2 with SSE2: 1 … 13
    // reads leave every remainder of each, one vector of candidates (16), one and a bit (17), five (80)
    Rng rng = Rng::stream("test/score_reads/counts");
    for (const Eigen::Index n : {16, 17, 80})
        for (Eigen::Index m = 1; m <= 13; ++m) {
            CAPTURE(n, m);
            const Episode e = episode(rng, n, m, 32);
            RowMat reads(m, 32);
            rng.fill_normal(reads, 0.3);
            for (Eigen::Index i = 0; i < m; i += 2) reads.row(i) += e.candidates.row(e.target[static_cast<std::size_t>(i)]);
            require_same(e, reads);
        }
}

TEST_CASE("score_reads breaks ties toward the lower index, as the scan does", "[readout][score]") {
    Episode e;
    e.candidates = RowMat::Zero(6, 4);
    e.candidates.row(1) << 1, 0, 0, 0;
    e.candidates.row(3) << 1, 0, 0, 0;  // the same as row 1
    e.candidates.row(4) << -1, 0, 0, 0;
    e.target = {3, 1, 0, 4};
    e.slot.assign(4, -1);
    RowMat reads = RowMat::Zero(4, 4);
    reads.row(0) << 2, 0, 0, 0;  // nearest: rows 1 and 3 tie → 1 (target 3: wrong)
    reads.row(1) << 1, 0, 0, 0;  // → 1 (right)
    reads.row(2) << 0, 0, 0, 0;  // every zero row ties with it: rows 0, 2, 5 → 0 (right)
    reads.row(3) << -0.0f, 0, 0, 0;  // -0: the same as 0 → 0 (target 4: wrong)
    require_same(e, reads);
    std::vector<SlotScore> got;
    score_reads(e, reads, got);
    REQUIRE(got.size() == 1);
    CHECK(got[0].correct == 2);
}

TEST_CASE("score_reads with reads whose dots overflow (inf, NaN scores) picks as the scan does", "[readout][score]") {
    Rng rng = Rng::stream("test/score_reads/huge");
    Episode e = episode(rng, 9, 12, 8);
    RowMat reads(12, 8);
    rng.fill_normal(reads);
    reads *= 1e37f;  // finite reads; their dots with the candidates can reach ±inf
    reads.row(0).setConstant(std::numeric_limits<float>::max());
    reads(0, 1) = -std::numeric_limits<float>::max();  // +inf and −inf in one dot: NaN
    e.candidates.row(0).setConstant(2.0f);
    require_same(e, reads);
}

TEST_CASE("score_reads breaks ties toward the lower index across lanes and in the tail", "[readout][score]") {
    // Enough candidates for the vectorised pass (16 lanes): equal nearest candidates at
    // indices in different lanes, in one lane, and in the tail past the last full block.
    Rng rng = Rng::stream("test/score_reads/ties");
    for (const std::vector<Eigen::Index>& copies :
         std::vector<std::vector<Eigen::Index>>{{70, 38, 21}, {53, 37}, {99, 97}, {96, 33}, {40, 5}}) {
        CAPTURE(copies);
        Episode e = episode(rng, 100, 6, 8);
        for (const Eigen::Index j : copies) e.candidates.row(j) = e.candidates.row(copies.front());
        e.candidates.row(17).setZero(), e.candidates.row(81).setZero();  // a read of 0 ties at 17 and 81
        RowMat reads(6, 8);
        for (Eigen::Index i = 0; i < 6; ++i) reads.row(i) = e.candidates.row(copies.front());
        reads.row(5).setZero();
        reads(5, 0) = -0.0f;
        e.target = {static_cast<int>(copies.front()), static_cast<int>(copies.back()), 3, 4, 5, 81};
        require_same(e, reads);
        std::vector<SlotScore> got;
        score_reads(e, reads, got);
        const Eigen::Index lowest = *std::min_element(copies.begin(), copies.end());
        int expected = 0;  // reads 0–4 go to the lowest copy; read 5 (zero) to row 17, not its target 81
        for (std::size_t i = 0; i < 5; ++i) expected += e.target[i] == lowest;
        REQUIRE(got.size() == 1);
        CHECK(got[0].correct == expected);
    }
}

TEST_CASE("score_reads: huge reads among ordinary ones are decided by the scan, the rest by the kernel", "[readout][score]") {
    Rng rng = Rng::stream("test/score_reads/mixed");
    for (const Eigen::Index n : {20, 100}) {
        CAPTURE(n);
        Episode e = episode(rng, n, 11, 16);
        RowMat reads(11, 16);
        rng.fill_normal(reads);
        reads.row(2) *= 1e36f;  // scores near the float range: the scan decides this row
        reads.row(7).setConstant(std::numeric_limits<float>::max());
        require_same(e, reads);
    }
}

TEST_CASE("score_reads over many candidates and reads, equal candidates far apart", "[readout][score]") {
    // n = 1500 candidates at d = 100 and 75 reads (whole tiles and a partial one at any width),
    // equal candidates 1100 columns apart
    const int d = 100;
    const Eigen::Index n = 1500, m = 75;
    Rng rng = Rng::stream("test/score_reads/many");
    Episode e = episode(rng, n, m, d);
    e.candidates.row(1300) = e.candidates.row(200);
    RowMat reads(m, d);
    rng.fill_normal(reads, 0.3);
    for (Eigen::Index i = 0; i < m; i += 3) reads.row(i) += e.candidates.row(e.target[static_cast<std::size_t>(i)]);
    for (const Eigen::Index i : {10, 70, 74}) {  // the scan picks 200
        reads.row(i) = e.candidates.row(1300);
        e.target[static_cast<std::size_t>(i)] = 1300;
    }
    require_same(e, reads);
}

TEST_CASE("nearest_candidates and candidate_dots on reads that are a block of a wider matrix", "[readout][score]") {
    Rng rng = Rng::stream("test/score_reads/block");
    RowMat candidates(70, 24), wide(9, 40);
    rng.fill_normal(candidates), rng.fill_normal(wide);
    const auto reads = wide.middleCols(5, 24);  // rows 40 floats apart
    CandidatePanel panel;
    panel.build(candidates);
    std::vector<int> best(9);
    nearest_candidates(reads, panel, best.data());
    RowMat dots;
    candidate_dots(reads, panel, dots);
    const RowMat dense = reads;
    REQUIRE(dots.rows() == 9);
    REQUIRE(dots.cols() == 70);
    for (Eigen::Index i = 0; i < 9; ++i) {
        CHECK(best[static_cast<std::size_t>(i)] == scan(dense, i, candidates));
        for (Eigen::Index j = 0; j < 70; ++j) CHECK(dots(i, j) == chain_dot(dense, i, candidates, j));
        CHECK(score_dot(dense.row(i).data(), candidates.row(5).data(), 24) == chain_dot(dense, i, candidates, 5));
    }
}

TEST_CASE("score_reads applies the tie rule with the kernel's products", "[readout][score]") {
    // Reads midway between their target and another candidate, pulled toward the target by
    // less than the tolerance and by more: the first are misses, the second hits.
    Rng rng = Rng::stream("test/score_reads/tie_rule");
    Episode e = episode(rng, 37, 8, 16);
    e.tie_tolerance = 0.2f;
    RowMat reads(8, 16);
    int expected = 0;
    for (Eigen::Index i = 0; i < 8; ++i) {
        const int t = e.target[static_cast<std::size_t>(i)], other = (t + 1) % 37;
        const float w = i % 2 == 0 ? 0.55f : 0.9f;  // (1 + τ)/2 = 0.6: 0.55 is a near tie
        reads.row(i) = w * e.candidates.row(t) + (1.0f - w) * e.candidates.row(other);
        if (scan(reads, i, e.candidates) != t) continue;
        bool right = true;
        const Vec sq = e.candidates.rowwise().squaredNorm();
        const auto s = [&](Eigen::Index j) { return sq(j) - 2.0f * chain_dot(reads, i, e.candidates, j); };
        for (Eigen::Index j = 0; j < 37 && right; ++j)
            if (j != t && s(j) - s(t) <= e.tie_tolerance * (e.candidates.row(j) - e.candidates.row(t)).squaredNorm())
                right = false;
        expected += right;
    }
    std::vector<SlotScore> got;
    score_reads(e, reads, got);
    REQUIRE(got.size() == 1);
    CHECK(got[0].correct == expected);
    CHECK(expected > 0);
    CHECK(expected < 8);
}
