// heads=h (memories/heads.hpp): a grid or cache split into h heads, each on d/h of the width
// with floor(B/h) floats of state. heads=1 is the memory itself, bit for bit; h heads are h
// independent memories on their slices; h that does not split the width is refused.
#include "core/error.hpp"
#include "core/rng.hpp"
#include "memories/heads.hpp"
#include "memories/registry.hpp"
#include "registry_specs.hpp"

#include <catch2/catch.hpp>

using namespace memcap;
using memcap::test::unit_rows;

namespace {

std::vector<std::string> split_entries() {
    std::vector<std::string> names;
    for (const MemoryEntry& e : memory_registry())
        if (e.splits_into_heads) names.push_back(e.name);
    return names;
}

}  // namespace

TEST_CASE("heads=1 is the memory itself, bit for bit", "[memory][heads]") {
    const std::vector<std::string> names = split_entries();
    REQUIRE(names.size() >= 10);  // the grids and the cache
    Rng data = Rng::stream("heads", 1);
    const int d = 32;
    const RowMat keys = unit_rows(data, 40, d), values = unit_rows(data, 40, d), queries = unit_rows(data, 40, d);
    for (const std::string& name : names) {
        CAPTURE(name);
        REQUIRE(parse_memory_spec(name + ":heads=1").canonical() == parse_memory_spec(name).canonical());
        for (const std::int64_t budget : {256, 1024}) {
            const MemoryShape shape{d, d, budget};
            auto one = make_memory(parse_memory_spec(name + ":heads=1"), shape, 4), plain = make_memory(parse_memory_spec(name), shape, 4);
            one->write_batch(keys, values), plain->write_batch(keys, values);
            REQUIRE(Vec(one->state()) == Vec(plain->state()));
            RowMat a(40, d), b(40, d);
            one->read_batch(queries, a), plain->read_batch(queries, b);
            REQUIRE(a == b);
        }
    }
}

TEST_CASE("h heads are h memories on their slices of the width, within the budget", "[memory][heads]") {
    Rng data = Rng::stream("heads", 2);
    const int d = 32;
    const RowMat keys = unit_rows(data, 12, d), values = unit_rows(data, 12, d), queries = unit_rows(data, 5, d);
    // the linear grid at its natural size per head (φ the identity on d/h coordinates): head i
    // reads Σ_t v_t[i] (k_t[i] · q[i]) on its slices [i]
    for (const int h : {2, 4}) {
        CAPTURE(h);
        auto m = make_memory(parse_memory_spec("linear:heads=" + std::to_string(h)), MemoryShape{d, d, {}}, 1);
        m->write_batch(keys, values);
        REQUIRE(m->state_floats() == std::int64_t{h} * (d / h) * (d / h));
        RowMat reads(5, d);
        m->read_batch(queries, reads);
        const int w = d / h;
        for (int i = 0; i < h; ++i) {
            const RowMat expect = (queries.middleCols(i * w, w) * keys.middleCols(i * w, w).transpose()) * values.middleCols(i * w, w);
            REQUIRE((reads.middleCols(i * w, w) - expect).cwiseAbs().maxCoeff() < 1e-5f);
        }
    }
    // every entry: the state of h heads fits the budget, and the size says how many heads
    for (const std::string& name : split_entries()) {
        CAPTURE(name);
        const Spec spec = parse_memory_spec(name + ":heads=4");
        const MemoryShape shape{d, d, 1024};
        const MemorySize size = memory_size(spec, shape);
        REQUIRE(size.dim("heads") == 4);
        auto m = make_memory(spec, shape, 2);
        m->write_batch(keys, values);
        REQUIRE(m->state_floats() <= 1024);
        REQUIRE(m->state_floats() == size.state_floats_after(keys.rows()));
        REQUIRE(m->state().size() == m->state_floats());
        REQUIRE(size.min_budget == 4 * memory_size(parse_memory_spec(name), MemoryShape{d / 4, d / 4, 1024 / 4}).min_budget);
    }
}

TEST_CASE("heads that do not split the width are refused with one line", "[memory][heads]") {
    REQUIRE_THROWS_WITH(make_memory(parse_memory_spec("linear:heads=3"), MemoryShape{32, 32, 1024}, 0), Catch::Contains("heads=3"));
    MemoryShape marked{32, 32, 1024};
    marked.salience_feature = 0;
    REQUIRE_THROWS_WITH(make_memory(parse_memory_spec("gated_deltanet:heads=2"), marked, 0), Catch::Contains("salience"));
    REQUIRE_THROWS_AS(parse_memory_spec("hrr:heads=2"), UsageError);  // not a grid or a cache: no such key
}
