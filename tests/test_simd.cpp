// core/simd.hpp's product kernel against its reference, the scalar madd chain of each entry in
// index order: bit for bit, for products small enough to run uncut and large enough to run
// panel by panel (depth in blocks, columns in panels), on both layouts of the left side, from
// zero and accumulating, with row and column counts that leave partial register tiles.
#include "core/rng.hpp"
#include "core/simd.hpp"
#include "core/types.hpp"

#include <catch2/catch.hpp>

#include <cstring>

using namespace memcap;

namespace {

/// c_rj = the madd chain Σ_i a_ri b_ij in i, from c_rj (accumulate) or 0: what each lane of the kernel computes.
void reference(const RowMat& a, bool transposed, const RowMat& b, RowMat& c, bool accumulate) {
    for (Eigen::Index r = 0; r < c.rows(); ++r)
        for (Eigen::Index j = 0; j < c.cols(); ++j) {
            float s = accumulate ? c(r, j) : 0.0f;
            for (Eigen::Index i = 0; i < b.rows(); ++i) s = simd::madd(transposed ? a(i, r) : a(r, i), b(i, j), s);
            c(r, j) = s;
        }
}

}  // namespace

TEST_CASE("simd product: every entry is its madd chain in index order, cut into panels or not", "[simd]") {
    // (rows, depth, cols): uncut (depth · cols within a panel); cut in depth (several blocks, the
    // last partial); cut in columns too (two panels, the second one vector wide: the 8-row tiles)
    const auto [rows, depth, cols] = GENERATE(std::tuple<int, int, int>{7, 50, 48}, std::tuple<int, int, int>{5, 700, 112},
                                              std::tuple<int, int, int>{11, 130, 1040});
    const bool transposed = GENERATE(false, true), accumulate = GENERATE(false, true);
    CAPTURE(rows, depth, cols, transposed, accumulate);
    const bool cut = static_cast<std::int64_t>(depth) * cols > simd::kPanelFloats;
    CHECK(cut == (depth > 50));  // the cases cover both paths
    Rng data = Rng::stream("simd_product", rows, depth, cols);
    RowMat a(transposed ? depth : rows, transposed ? rows : depth), b(depth, cols), c(rows, cols);
    data.fill_normal(a), data.fill_normal(b), data.fill_normal(c);
    RowMat expected = c;
    reference(a, transposed, b, expected, accumulate);
    if (transposed)
        simd::add_transposed_product(a.data(), a.cols(), b.data(), b.cols(), depth, c.data(), c.cols(), rows, cols, accumulate);
    else if (accumulate)
        simd::multiply(a.data(), a.cols(), 1, b.data(), b.cols(), depth, c.data(), c.cols(), rows, cols, true);
    else
        simd::product(a.data(), a.cols(), b.data(), b.cols(), depth, c.data(), c.cols(), rows, cols);
    REQUIRE(std::memcmp(c.data(), expected.data(), sizeof(float) * static_cast<std::size_t>(c.size())) == 0);
}
