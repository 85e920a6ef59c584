// mqar (tasks/mqar.hpp): zoology's multi-query associative recall, every token written and
// each query read as it arrives. The stream has zoology's layout (pairs first, each key asked
// once more at a power-law gap, filler elsewhere), bad parameters are refused with one line,
// and the harness reads it through the memory's causal form.
#include "core/error.hpp"
#include "support.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace memcap;
using namespace memcap::test;

namespace {

void require_refused(const std::string& text, const TaskCell& cell, const std::string& key_value) {
    CAPTURE(text, cell.n);
    const auto task = make_task(parse_task_spec(text));
    try {
        task->check(cell);
        FAIL("not refused");
    } catch (const UsageError& e) {
        const std::string message = e.what();
        INFO(message);
        REQUIRE(message.find(key_value) != std::string::npos);
        REQUIRE(message.find('\n') == std::string::npos);
    }
}

/// The row of `table` equal to `row`, or −1.
Eigen::Index find_row(const RowMat& table, const RowMat& row) {
    for (Eigen::Index i = 0; i < table.rows(); ++i)
        if (table.row(i) == row) return i;
    return -1;
}

}  // namespace

TEST_CASE("mqar: bad parameters are refused with one line", "[tasks][mqar][check]") {
    require_refused("mqar:vocab=33", TaskCell{16, 32, 0}, "vocab=33");  // 15 key symbols for 16 pairs
    require_refused("mqar:length=63", TaskCell{8, 32, 0}, "length=63");
    require_refused("mqar:length=60", TaskCell{16, 32, 0}, "length=60");  // < 4n
    require_refused("mqar:queries=9", TaskCell{8, 32, 0}, "queries=9");
    require_refused("mqar", TaskCell{8, 1, 0}, "d=1");
    REQUIRE_THROWS_AS(parse_task_spec("mqar:alpha=0"), UsageError);
    REQUIRE_THROWS_AS(parse_task_spec("mqar:alpha=-1"), UsageError);
    REQUIRE_NOTHROW(make_task(parse_task_spec("mqar:vocab=34,length=64"))->check(TaskCell{16, 32, 0}));  // the edges
}

TEST_CASE("mqar: zoology's stream, written token by token through the shift", "[tasks][mqar]") {
    const auto task = make_task(parse_task_spec("mqar:vocab=512,length=128"));
    const TaskCell cell{8, 32, 3};
    for (std::int64_t index = 0; index < 5; ++index) {
        const Episode e = task->episode(cell, Split::Test, index);
        REQUIRE(e.keys.rows() == 127);  // tokens 1..T−1
        REQUIRE(e.queries == e.values);
        REQUIRE(e.candidates.rows() == 256);  // the value symbols
        REQUIRE(e.read_at.size() == 8);       // every key asked once
        REQUIRE(e.target.size() == 8);
        // the shift: the key of write t is the value of write t − 1 (both the embedding of x_t)
        for (Eigen::Index t = 1; t < e.keys.rows(); ++t) REQUIRE(e.keys.row(t) == e.values.row(t - 1));
        std::vector<int> asked_keys;
        for (std::size_t i = 0; i < e.read_at.size(); ++i) {
            const int at = e.read_at[i];
            REQUIRE(at >= 2 * 8 - 1);  // in the query region (token 2n + 2g is write 2n + 2g − 1)
            REQUIRE(at % 2 == 1);
            // the pair: write 2j (tokens 2j, 2j+1) holds (key_j, value_j), and the query token is key_j
            const RowMat query = e.queries.row(at);
            bool found = false;
            for (Eigen::Index j = 0; j < 8; ++j)
                if (e.keys.row(2 * j) == query) {
                    found = true;
                    REQUIRE(find_row(e.candidates, e.values.row(2 * j)) == e.target[i]);
                }
            REQUIRE(found);
        }
    }
}

TEST_CASE("mqar: query gaps follow the power law (alpha = 0.01 mostly near, alpha = 1 uniform)", "[tasks][mqar]") {
    // With P(g) ∝ (g+1)^(α−1) over 124 gaps, P(g < 12) = H(12)/H(124) ≈ 0.58 at α → 0, 12/124 ≈ 0.10 at α = 1.
    const auto near_share = [](const std::string& alpha) {
        const auto task = make_task(parse_task_spec("mqar:vocab=512,length=256,alpha=" + alpha));
        const TaskCell cell{4, 16, 0};
        int near = 0, all = 0;
        for (std::int64_t index = 0; index < 300; ++index) {
            const Episode e = task->episode(cell, Split::Test, index);
            for (const int at : e.read_at) {
                const int gap = (at + 1 - 2 * 4) / 2;
                near += gap < 12;
                ++all;
            }
        }
        return double(near) / double(all);
    };
    CHECK(near_share("0.01") > 0.45);
    CHECK(near_share("1") < 0.16);
}

TEST_CASE("mqar runs through the causal form: the cache recalls, an overloaded grid does not", "[tasks][mqar][harness]") {
    // the unbounded cache at a sharp beta finds each query's key among the writes; the linear
    // grid at d = 16 carries 127 writes' crosstalk
    const Measured cache = measure(Run("softmax:beta=64", "mqar:vocab=1024,length=128,episodes=8", 8, 3, std::nullopt, 64));
    const Measured grid = measure(Run("linear", "mqar:vocab=1024,length=128,episodes=8", 8, 3, std::nullopt, 16));
    CHECK(cache.mean > 0.9);
    CHECK(grid.mean < cache.mean - 0.3);
    // the probe cannot read it (its reads are taken mid-stream)
    REQUIRE_THROWS_AS(resolve_cell(make_cell(parse_memory_spec("linear"), parse_task_spec("mqar"), parse_readout_spec("probe"),
                                             std::nullopt, 16, 8, 0)),
                      UsageError);
}
