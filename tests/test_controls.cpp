// Controls and interventions on associative recall, run on every backend in the table.
#include "support.hpp"

#include "core/error.hpp"
#include "core/rng.hpp"
#include "memories/softmax/softmax_cache.hpp"

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
    // The table declares it (MemoryEntry::order_free): the cache (unbounded at its natural
    // size), the additive grid, HRR and the selective model without decay are; the delta
    // rule and the RNN are not. The measured difference must agree with the declaration.
    const bool order_free = find_memory(name).order_free;
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
    const CellResult o = run_cell(make_cell(parse_memory_spec("softmax"), parse_task_spec("assoc_recall:control=key_collision"),
                                            parse_readout_spec("native"), std::nullopt, 64, 8, 0));
    // Distance of the blend (v_a + v_b)/2 from v_b for nearly orthogonal unit values: ≈ √2/2.
    REQUIRE(o.slots[0].target_dist_sum / static_cast<double>(o.slots[0].queries) == Approx(std::sqrt(0.5)).epsilon(0.15));
}

TEST_CASE("structural mask: the cache reads without the hidden pair, also after eviction", "[control][mask]") {
    // A cache of 4 pairs after 10 writes holds writes 6..9 in a ring. Hiding write w must
    // equal essay 000's mask on the slot holding it (SoftmaxCache::weights with `allowed`);
    // hiding an evicted write hides nothing. The writes arrive in batches of different
    // sizes (a batch that fills the cache part-way, then wraps), after a reset.
    const int d = 8;
    SoftmaxCache cache(MemoryShape{d, d, 4 * 2 * d}, 16.0);
    Rng rng = Rng::stream("test/structural_mask");
    const RowMat keys = rng.unit_rows<RowMat>(10, d), values = rng.unit_rows<RowMat>(10, d);
    cache.write_batch(keys.topRows(7), values.topRows(7));  // then forgotten
    cache.reset();
    REQUIRE(cache.slot_of(0) == -1);
    cache.write_batch(keys.topRows(2), values.topRows(2));
    REQUIRE(cache.slot_of(1) == 1);
    REQUIRE(cache.slot_of(2) == -1);
    cache.write_batch(keys.middleRows(2, 5), values.middleRows(2, 5));  // 2 fresh slots, then the ring wraps
    cache.write_batch(keys.bottomRows(3), values.bottomRows(3));
    REQUIRE(cache.stored() == 4);
    const auto held = Eigen::Map<const RowMat>(cache.state().data(), 4, 2 * d);
    for (int w = 0; w < 10; ++w) {
        CAPTURE(w);
        const std::int64_t slot = cache.slot_of(w);
        REQUIRE((w < 6 ? slot == -1 : slot >= 0));
        if (slot >= 0) REQUIRE(held.row(slot).leftCols(d) == keys.row(w));
    }
    const RowMat queries = keys.bottomRows(4);
    for (int w : {0, 5, 6, 7, 9}) {
        CAPTURE(w);
        RowMat masked(4, d), plain(4, d);
        const std::vector<int> hidden(4, w);
        cache.read_batch(queries, masked, ReadOptions{hidden});
        cache.read_batch(queries, plain);
        for (int i = 0; i < 4; ++i) {
            std::vector<char> allowed(4, 1);
            if (cache.slot_of(w) >= 0) allowed[static_cast<std::size_t>(cache.slot_of(w))] = 0;
            const Vec expected = held.rightCols(d).transpose() * cache.weights(queries.row(i).transpose(), &allowed);
            REQUIRE((masked.row(i).transpose() - expected).cwiseAbs().maxCoeff() < 1e-6f);
            if (w < 6) REQUIRE((masked.row(i) - plain.row(i)).cwiseAbs().maxCoeff() < 1e-6f);
            else if (w == 6 + i) REQUIRE((masked.row(i) - plain.row(i)).cwiseAbs().maxCoeff() > 1e-3f);  // its own pair hidden
        }
    }
}

TEST_CASE("structural mask on associative recall: hiding the asked-for pair falls below chance", "[control][mask]") {
    // n = 4: a plain read is perfect at beta = 16 and at chance (25%) at beta = 0, where
    // every stored value gets the same weight. Hiding the asked-for pair removes the
    // target from the blend, so it must fall below chance by 3 standard errors at both.
    const std::int64_t n = 4;
    REQUIRE(measure(Run{"softmax", "assoc_recall", n, 20}).mean >= 1.0 - 1e-12);
    require_matches_exact(measure(Run{"softmax:beta=0", "assoc_recall", n, 20}), 1.0 / n);
    for (const char* beta : {"16", "0"}) {
        CAPTURE(beta);
        const auto hidden = measure(Run{std::string("softmax:beta=") + beta, "assoc_recall:control=structural_mask", n, 20});
        INFO("measured " << 100 * hidden.mean << "%, chance 25%, se " << 100 * hidden.se());
        REQUIRE(hidden.mean + 3 * hidden.se() < 1.0 / n);
    }
}

TEST_CASE("structural mask: refused up front unless the memory declares can_hide_pairs and reads natively",
          "[control][mask]") {
    // A usage error, not a row: memories without separate pairs, and the probe on any memory.
    const Spec masked = parse_task_spec("assoc_recall:control=structural_mask");
    int able = 0;
    for (const auto& name : memory_names()) {
        CAPTURE(name);
        const Spec memory = parse_memory_spec(name);
        const auto cell = [&](const Spec& task, const char* readout) {
            return make_cell(memory, task, parse_readout_spec(readout), std::nullopt, 64, 8, 0);
        };
        REQUIRE_THROWS_AS(check_cell(cell(masked, "probe")), UsageError);
        if (find_memory(name).can_hide_pairs) {
            ++able;
            REQUIRE_NOTHROW(check_cell(cell(masked, "native")));
        } else {
            REQUIRE_THROWS_WITH(check_cell(cell(masked, "native")),
                                Catch::Contains("memory '" + name + "' does not"));
        }
        // Without the control, nothing is refused.
        REQUIRE_NOTHROW(check_cell(cell(parse_task_spec("assoc_recall"), "native")));
    }
    REQUIRE(able >= 1);  // the softmax cache
}
