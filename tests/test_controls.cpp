// Controls and interventions on associative recall, run on every backend in the table.
#include "support.hpp"

#include "core/rng.hpp"

using namespace memcap;
using namespace memcap::test;

TEST_CASE("controls that break the key-value pairing fall to chance on every memory", "[control]") {
    const std::string name = GENERATE(from_range(memory_names()));
    const std::string control = GENERATE(as<std::string>{}, "shuffled_query", "key_shuffle", "value_shuffle");
    CAPTURE(name, control);
    const std::int64_t n = 16;
    // the rotation RNN is read by the probe; 300 training episodes are plenty for a chance check
    require_matches_exact(measure(Run{name, "assoc_recall:control=" + control, n, 20, std::nullopt, 64, "auto:train=300"}), 1.0 / n);
}

TEST_CASE("uniform attention (beta = 0) falls to chance", "[control]") {
    require_matches_exact(measure(Run{"softmax:beta=0", "assoc_recall", 64, 20}), 1.0 / 64);
}

TEST_CASE("paired permutation of the write order: order-free memories read the same to rounding", "[control]") {
    const std::string name = GENERATE(from_range(memory_names()));
    CAPTURE(name);
    // Order-free: a cache that never evicts, the additive grid, HRR, and the selective
    // model without decay (rho = 1). Order-dependent: the delta rule and the RNN.
    const bool order_free = name == "softmax" || name == "linear" || name == "hrr" || name == "selective";
    const int d = 64, n = 48;
    Rng rng = Rng::stream("test/permutation", name);
    const RowMat keys = rng.unit_rows<RowMat>(n, d), values = rng.unit_rows<RowMat>(n, d);
    RowMat pk(n, d), pv(n, d);
    for (int i = 0; i < n; ++i) pk.row(i) = keys.row((i * 7 + 3) % n), pv.row(i) = values.row((i * 7 + 3) % n);
    auto a = make_memory(parse_memory_spec(name), MemoryShape{d, d, {}}, 1);
    auto b = make_memory(parse_memory_spec(name), MemoryShape{d, d, {}}, 1);
    a->write_batch(keys, values);
    b->write_batch(pk, pv);
    RowMat ra(n, d), rb(n, d);
    a->read_batch(keys, ra);
    b->read_batch(keys, rb);
    const float largest = (ra - rb).cwiseAbs().maxCoeff();
    INFO("largest output difference " << largest);
    if (order_free) REQUIRE(largest < 1e-4f);
    else REQUIRE(largest > 1e-2f);
    // And in the task: the same accuracy as the unpermuted episodes, for order-free memories.
    if (order_free) {
        const auto plain = measure(Run{name, "assoc_recall", 128, 10});
        const auto permuted = measure(Run{name, "assoc_recall:control=paired_permutation", 128, 10});
        REQUIRE(std::abs(plain.mean - permuted.mean) <= 1.0 / (32 * 10));  // at most one query of 320 flips on a tie
    }
}

TEST_CASE("key collision: an order-free memory blends the two values, the delta rule keeps the newer", "[control]") {
    const auto cache = measure(Run{"softmax", "assoc_recall:control=key_collision", 8, 20});
    // The blend is equidistant from both values, so being "right" is a coin flip.
    require_matches_exact(cache, 0.5);
    const auto delta = measure(Run{"delta", "assoc_recall:control=key_collision", 8, 20});
    REQUIRE(delta.mean >= 1.0 - 1e-12);
    const CellSpec cell{parse_memory_spec("softmax"), parse_task_spec("assoc_recall:control=key_collision"),
                        parse_readout_spec("native"), std::nullopt, 64, 8, 0};
    const CellOutcome o = run_cell(cell);
    // Distance of the blend (v_a + v_b)/2 from v_b for nearly orthogonal unit values: ≈ √2/2.
    REQUIRE(o.slots[0].target_dist_sum / static_cast<double>(o.slots[0].queries) == Approx(std::sqrt(0.5)).epsilon(0.15));
}
