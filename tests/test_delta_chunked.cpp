// The delta rule's chunked batch write (memories/delta/delta_grid.cpp: the UT form,
// (I + βL) U = β(V − Φ Mᵀ) per chunk of 16) equals the sequential rule up to float rounding.
#include "core/rng.hpp"
#include "core/spec.hpp"
#include "memories/registry.hpp"

#include <catch2/catch.hpp>

using namespace memcap;

TEST_CASE("delta rule: the chunked batch write equals the sequential rule", "[memory][delta]") {
    // DeltaGrid::write_batch solves chunks of 16 writes with matrix products (exact
    // algebra); write() applies the rule one pair at a time. n = 300 spans several
    // chunks and a partial one; repeated keys make later writes edit earlier ones.
    const int d = 64, n = 300;
    const double beta = GENERATE(1.0, 0.5, 1.9);
    const std::int64_t budget = GENERATE(1024, 4096);
    CAPTURE(beta, budget);
    const Spec spec = parse_memory_spec("delta:beta=" + format_real(beta));
    auto batched = make_memory(spec, MemoryShape{d, d, budget}, 3), single = make_memory(spec, MemoryShape{d, d, budget}, 3);
    Rng data = Rng::stream("delta_chunked_data", budget);
    RowMat keys(n, d), values(n, d);
    data.fill_normal(keys), data.fill_normal(values);
    for (int i = 7; i < n; i += 7) keys.row(i) = keys.row(i - 5);  // edits of earlier keys
    normalise_rows(keys), normalise_rows(values);

    batched->write_batch(keys, values);
    for (int i = 0; i < n; ++i) single->write(keys.row(i).transpose(), values.row(i).transpose());
    const Vec a = batched->state(), b = single->state();
    INFO("relative difference " << (a - b).norm() / b.norm());
    REQUIRE((a - b).norm() <= 1e-4f * b.norm());
}
