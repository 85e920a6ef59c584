// HRR's factored batches (memories/hrr/hrr.hpp: write through G = Kᵀ V and the maps'
// spectra, read through W = P_vᵀ irfft(conj(A) · F T) / D by Parseval) equal the per-item
// forms up to float rounding. At these sizes the batch takes the factored form.
#include "core/rng.hpp"
#include "memories/hrr/hrr.hpp"

#include <catch2/catch.hpp>

using namespace memcap;

TEST_CASE("HRR: factored batched write and read equal one at a time", "[memory][hrr]") {
    const int d = 64, n = 512;
    const std::int64_t budget = GENERATE(1024, 4097);  // even and odd D
    CAPTURE(budget);
    REQUIRE(Hrr::write_flops(double(budget), d, d, n, true) < Hrr::write_flops(double(budget), d, d, n, false));
    REQUIRE(Hrr::read_flops(double(budget), d, d, n, true) < Hrr::read_flops(double(budget), d, d, n, false));
    const MemoryShape shape{d, d, budget};
    Rng p1 = Rng::stream("hrr_factored", budget), p2 = Rng::stream("hrr_factored", budget);
    Hrr batched(shape, p1), single(shape, p2);
    Rng data = Rng::stream("hrr_factored_data", budget);
    RowMat keys(n, d), values(n, d);
    data.fill_normal(keys), data.fill_normal(values);
    normalise_rows(keys), normalise_rows(values);

    batched.write_batch(keys, values);
    for (int i = 0; i < n; ++i) single.write(keys.row(i).transpose(), values.row(i).transpose());
    const Vec a = batched.state(), b = single.state();
    REQUIRE((a - b).norm() <= 1e-4f * b.norm());

    RowMat reads(n, d);
    batched.read_batch(keys, reads);
    for (int i = 0; i < n; i += 37) {
        Vec one(d);
        batched.read(keys.row(i).transpose(), one);
        REQUIRE((reads.row(i).transpose() - one).norm() <= 1e-4f * one.norm());
    }
}
