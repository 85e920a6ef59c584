// The contract every backend in the registry honours, checked for each entry
// automatically: a backend added to the table is tested here with no change.
#include "core/error.hpp"
#include "core/rng.hpp"
#include "memories/registry.hpp"

#include <catch2/catch.hpp>

using namespace memcap;

namespace {

RowMat unit_rows(Rng& rng, Eigen::Index n, Eigen::Index d) {
    RowMat m(n, d);
    rng.fill_normal(m);
    normalise_rows(m);
    return m;
}

Eigen::Index nearest(const RowMat& candidates, const Vec& read) {
    Eigen::Index best;
    (candidates.rowwise() - read.transpose()).rowwise().squaredNorm().minCoeff(&best);
    return best;
}

}  // namespace

TEST_CASE("every memory honours the contract", "[memory][conformance]") {
    const std::string name = GENERATE(from_range(memory_names()));
    CAPTURE(name);
    const Spec spec = parse_memory_spec(name);
    const int d = 32;
    Rng data = Rng::stream("conformance", name);
    const RowMat keys = unit_rows(data, 6, d), values = unit_rows(data, 6, d);

    SECTION("state fits the budget and the flat view has state_floats floats") {
        for (std::int64_t budget : {128, 256, 300, 1024, 4096}) {
            CAPTURE(budget);
            auto m = make_memory(spec, MemoryShape{d, d, budget}, 1);
            m->write_batch(keys, values);
            REQUIRE(m->state_floats() <= budget);
            REQUIRE(m->state_floats() > 0);
            REQUIRE(m->state().size() == m->state_floats());
        }
    }
    SECTION("a budget below the minimum is a UsageError naming the minimum") {
        const MemoryShape natural{d, d, {}};
        const std::int64_t minimum = find_memory(name).min_budget(spec, natural);
        REQUIRE(minimum >= 1);
        REQUIRE_THROWS_WITH(make_memory(spec, MemoryShape{d, d, minimum - 1}, 0), Catch::Contains("minimum"));
        REQUIRE_NOTHROW(make_memory(spec, MemoryShape{d, d, minimum}, 0));
    }
    SECTION("one stored pair comes back") {
        auto m = make_memory(spec, MemoryShape{d, d, {}}, 3);
        m->write(keys.row(0).transpose(), values.row(0).transpose());
        Vec out(d);
        m->read(keys.row(0).transpose(), out);
        REQUIRE(nearest(values, out) == 0);
        REQUIRE(out.allFinite());
    }
    SECTION("reset equals a fresh memory") {
        auto fresh = make_memory(spec, MemoryShape{d, d, 512}, 5);
        auto used = make_memory(spec, MemoryShape{d, d, 512}, 5);
        used->write_batch(keys, values);
        used->reset();
        used->write_batch(keys.topRows(2), values.topRows(2));
        fresh->write_batch(keys.topRows(2), values.topRows(2));
        REQUIRE(used->state_floats() == fresh->state_floats());
        REQUIRE(Vec(used->state()) == Vec(fresh->state()));
        RowMat a(6, d), b(6, d);
        used->read_batch(keys, a);
        fresh->read_batch(keys, b);
        REQUIRE(a == b);
    }
    SECTION("a hidden pair is honoured exactly when the table declares can_hide_pairs, never ignored") {
        auto m = make_memory(spec, MemoryShape{d, d, {}}, 3);
        m->write_batch(keys.topRows(2), values.topRows(2));
        const std::vector<int> hide_first(2, 0);
        RowMat plain(2, d), hidden(2, d);
        m->read_batch(keys.topRows(2), plain);
        m->read_batch(keys.topRows(2), plain, ReadOptions{});  // empty options: the same plain read
        if (find_memory(name).can_hide_pairs) {
            m->read_batch(keys.topRows(2), hidden, ReadOptions{hide_first});
            // query k0 with pair 0 hidden can only reach v1; query k1 is unaffected
            REQUIRE(nearest(values, hidden.row(0).transpose()) == 1);
            REQUIRE(nearest(values, hidden.row(1).transpose()) == nearest(values, plain.row(1).transpose()));
        } else {
            REQUIRE_THROWS_AS(m->read_batch(keys.topRows(2), hidden, ReadOptions{hide_first}), std::invalid_argument);
        }
    }
    SECTION("the same seed gives the same reads; batched equals one at a time") {
        auto one = make_memory(spec, MemoryShape{d, d, 400}, 7);
        auto two = make_memory(spec, MemoryShape{d, d, 400}, 7);
        one->write_batch(keys, values);
        for (int i = 0; i < keys.rows(); ++i) two->write(keys.row(i).transpose(), values.row(i).transpose());
        RowMat batched(6, d);
        one->read_batch(keys, batched);
        for (int i = 0; i < keys.rows(); ++i) {
            Vec single(d);
            two->read(keys.row(i).transpose(), single);
            REQUIRE((single.transpose() - batched.row(i)).cwiseAbs().maxCoeff() < 1e-5f);
        }
        REQUIRE((Vec(one->state()) - Vec(two->state())).cwiseAbs().maxCoeff() < 1e-5f);
    }
}
