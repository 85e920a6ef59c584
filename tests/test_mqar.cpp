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

void require_mqar_refused(const std::string& text, const TaskCell& cell, const std::string& key_value) {
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
    require_mqar_refused("mqar:vocab=33", TaskCell{16, 32, 0}, "vocab=33");  // 15 key symbols for 16 pairs
    require_mqar_refused("mqar:length=63", TaskCell{8, 32, 0}, "length=63");
    require_mqar_refused("mqar:length=60", TaskCell{16, 32, 0}, "length=60");  // < 4n
    require_mqar_refused("mqar:queries=9", TaskCell{8, 32, 0}, "queries=9");
    require_mqar_refused("mqar", TaskCell{8, 1, 0}, "d=1");
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

TEST_CASE("mqar variants: bad parameters are refused with one line", "[tasks][mqar][check]") {
    require_mqar_refused("mqar:updates=9", TaskCell{8, 32, 0}, "updates=9");               // more than n
    require_mqar_refused("mqar:length=64,updates=2", TaskCell{16, 32, 0}, "length=64");    // 4n + 2u = 68
    require_mqar_refused("mqar:key_tokens=2", TaskCell{8, 32, 0}, "n=8");                  // not a square
    require_mqar_refused("mqar:key_tokens=2,length=90", TaskCell{16, 32, 0}, "length=90");  // < 6n
    require_mqar_refused("mqar:key_tokens=2,vocab=12", TaskCell{9, 32, 0}, "vocab=12");     // 3 first-part symbols for g = 3
    require_mqar_refused("mqar:key_tokens=2,updates=1", TaskCell{4, 32, 0}, "updates=1");
    REQUIRE_THROWS_AS(parse_task_spec("mqar:key_tokens=1"), UsageError);
    REQUIRE_THROWS_AS(parse_task_spec("mqar:key_tokens=3"), UsageError);
    REQUIRE_NOTHROW(make_task(parse_task_spec("mqar:length=68,updates=2"))->check(TaskCell{16, 32, 0}));  // the edges
    REQUIRE_NOTHROW(make_task(parse_task_spec("mqar:key_tokens=2,length=96"))->check(TaskCell{16, 32, 0}));
}

TEST_CASE("forgetting mqar (updates=u): u keys written again after the pairs, the answer their latest value", "[tasks][mqar]") {
    const auto task = make_task(parse_task_spec("mqar:vocab=512,length=128,updates=3"));
    const TaskCell cell{8, 32, 1};
    for (std::int64_t index = 0; index < 5; ++index) {
        const Episode e = task->episode(cell, Split::Test, index);
        REQUIRE(e.read_at.size() == 8);
        int updated = 0;
        for (std::size_t i = 0; i < e.read_at.size(); ++i) {
            const int at = e.read_at[i];
            REQUIRE(at >= 2 * (8 + 3) - 1);  // after the pairs and the updates
            const RowMat query = e.queries.row(at);
            // the latest write keyed by the query's key among the pairs and updates (writes 0, 2, .., 2(n + u) − 2)
            Eigen::Index latest = -1, first = -1;
            for (Eigen::Index j = 0; j < 8 + 3; ++j)
                if (e.keys.row(2 * j) == query) {
                    latest = 2 * j;
                    if (first < 0) first = 2 * j;
                }
            REQUIRE(first >= 0);
            REQUIRE(find_row(e.candidates, e.values.row(latest)) == e.target[i]);
            if (latest != first) {
                ++updated;
                REQUIRE(e.values.row(latest) != e.values.row(first));  // a new value
            }
        }
        REQUIRE(updated == 3);
    }
    // the unbounded cache scores both copies of an updated key alike and reads the average of the
    // old and the new value: right on the untouched keys and on about half the updated ones, far
    // above the chance of 512 values
    const Measured cache = measure(Run("softmax:beta=64", "mqar:vocab=1024,length=128,updates=4,episodes=8", 8, 3, std::nullopt, 64));
    CHECK(cache.mean > 0.3);
    CHECK(cache.mean < 0.9);  // the old value is not forgotten
}

TEST_CASE("compositional mqar (key_tokens=2): a g x g grid of two-token keys, read through a two-token short convolution", "[tasks][mqar]") {
    const auto task = make_task(parse_task_spec("mqar:vocab=600,length=128,key_tokens=2"));
    const TaskCell cell{9, 32, 2};
    REQUIRE(task->chance(cell) == Approx(1.0 / 200));  // values 400 .. 599
    for (std::int64_t index = 0; index < 5; ++index) {
        const Episode e = task->episode(cell, Split::Test, index);
        REQUIRE(e.keys.rows() == 127);
        REQUIRE(e.candidates.rows() == 200);
        REQUIRE(e.read_at.size() == 9);
        // the shift: the key of write t is the query of write t − 1
        for (Eigen::Index t = 1; t < e.keys.rows(); ++t) REQUIRE(e.keys.row(t) == e.queries.row(t - 1));
        // each triplet K1 K2 V: the value's write (row 3i + 1) is keyed by both parts; a query's K2
        // token reads with exactly that key, and the answer is that write's value
        for (std::size_t i = 0; i < e.read_at.size(); ++i) {
            const int at = e.read_at[i];
            REQUIRE(at >= 3 * 9);
            REQUIRE(at % 3 == 0);
            Eigen::Index found = -1;
            for (Eigen::Index j = 0; j < 9; ++j)
                if (e.keys.row(3 * j + 1) == e.queries.row(at)) found = 3 * j + 1;
            REQUIRE(found >= 0);
            REQUIRE(find_row(e.candidates, e.values.row(found)) == e.target[i]);
        }
        // neither part alone names a value: the 9 keys are a 3 x 3 grid, so 3 distinct second parts
        // (token 3i + 1, the value of write 3i), each in 3 keys; the first parts (token 3i, the value
        // of write 3i − 1, i >= 1) are at most 3 distinct too
        const auto distinct = [&](Eigen::Index from, Eigen::Index offset) {
            std::vector<Eigen::Index> seen;
            for (Eigen::Index j = from; j < 9; ++j) {
                bool known = false;
                for (const Eigen::Index r : seen) known = known || e.values.row(r) == e.values.row(3 * j + offset);
                if (!known) seen.push_back(3 * j + offset);
            }
            return seen.size();
        };
        REQUIRE(distinct(0, 0) == 3);
        REQUIRE(distinct(1, -1) <= 3);
    }
    // the unbounded cache recalls through the two-token keys
    const Measured cache = measure(Run("softmax:beta=64", "mqar:vocab=1200,length=128,key_tokens=2,episodes=8", 9, 3, std::nullopt, 64));
    CHECK(cache.mean > 0.9);
}
