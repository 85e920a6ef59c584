// Backends from outside the table: register_memory, and the example backend
// (tests/example_backend.hpp), which the test binary registers at the start of
// every run so that every test iterating over the registry (conformance, controls)
// covers it as it covers the built-in backends.
#ifndef CATCH_CONFIG_EXTERNAL_INTERFACES  // (the target defines it: tests/CMakeLists.txt)
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#endif
#include "example_backend.hpp"
#include "support.hpp"

#include "core/error.hpp"
#include "harness/results/csv.hpp"

using namespace memcap;
using namespace memcap::test;

namespace {

struct RegisterExampleBackend : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;
    void testRunStarting(Catch::TestRunInfo const& info) override {
        example::register_example_backend();
        TestEventListenerBase::testRunStarting(info);
    }
};

}  // namespace

CATCH_REGISTER_LISTENER(RegisterExampleBackend)

TEST_CASE("the example backend is registered like a built-in one", "[memory][registration]") {
    const auto names = memory_names();
    REQUIRE(std::find(names.begin(), names.end(), "value_sum") != names.end());
    REQUIRE(names.front() == "softmax");  // the table's backends first, in order
    const MemoryEntry& entry = find_memory("value_sum");
    REQUIRE(entry.order_free);
    REQUIRE_FALSE(entry.can_hide_pairs);
    REQUIRE(entry.native_read);
    // spec strings: defaults filled in, checked against its declared parameters
    REQUIRE(parse_memory_spec("value_sum").canonical() == "value_sum:decay=1");
    REQUIRE_THROWS_AS(parse_memory_spec("value_sum:decay=2"), UsageError);
    // sizing, minimum budget, peak bytes and cost model through the generic functions
    const Spec spec = parse_memory_spec("value_sum:decay=0.5");
    REQUIRE(memory_size(spec, MemoryShape(64, 64, 4096)).state_floats == 64);
    REQUIRE_THROWS_WITH(make_memory(spec, MemoryShape(64, 64, 63), 0), Catch::Contains("minimum of 64"));
    REQUIRE(memory_peak_bytes(spec, MemoryShape(64, 64), 1000000, 32) == 4 * 64);
    REQUIRE(entry.cost(spec, MemoryShape(64, 64), Kernel::write_batch, 0, 10).flops == 2.0 * 10 * 64);
    // the decay acts: two writes of v leave (1 + λ) v
    auto m = make_memory(spec, MemoryShape(4, 4), 0);
    Vec k = Vec::Zero(4), v = Vec::Ones(4), out(4);
    m->write(k, v);
    m->write(k, v);
    m->read(k, out);
    REQUIRE(out.isApproxToConstant(1.5f));
}

TEST_CASE("register_memory refuses an empty, malformed or taken name and an incomplete entry", "[memory][registration]") {
    MemoryEntry e = example::value_sum_entry();
    REQUIRE_THROWS_WITH(register_memory(e), Catch::Contains("'value_sum' is already registered"));
    e.name = "softmax";
    REQUIRE_THROWS_WITH(register_memory(e), Catch::Contains("'softmax' is already registered"));
    e.name = "";
    REQUIRE_THROWS_AS(register_memory(e), UsageError);
    for (const char* bad : {"value sum", "value_sum:decay=1", "sum!"}) {
        CAPTURE(bad);
        e.name = bad;
        REQUIRE_THROWS_AS(register_memory(e), UsageError);
    }
    e = example::value_sum_entry();
    e.name = "value_sum_no_factory";
    e.make = nullptr;
    REQUIRE_THROWS_WITH(register_memory(e), Catch::Contains("factory"));
    e = example::value_sum_entry();
    e.name = "value_sum_bad_default";
    e.params = {real_param("decay", "3", "out of its own range", 0.0, true, 1.0)};
    REQUIRE_THROWS_AS(register_memory(e), UsageError);
    e = example::value_sum_entry();
    e.name = "value_sum_bad_left_out";
    e.params = {optional_param(real_param("decay", "", "a decay; 2 would mean none", 0.0, true, 1.0))};
    e.params[0].same_as_none = "2";  // out of the parameter's own range: every value would be refused
    REQUIRE_THROWS_WITH(register_memory(e), Catch::Contains("value meaning left out, '2'"));
    const auto names = memory_names();
    REQUIRE(std::count(names.begin(), names.end(), "value_sum") == 1);
    REQUIRE(std::find(names.begin(), names.end(), "value_sum_no_factory") == names.end());
}

TEST_CASE("the example backend runs in cells like any backend", "[memory][registration]") {
    // run_cell: associative recall at chance (the read ignores the query), copying at
    // chance, the structural mask refused from its traits.
    const CellSpec cell = make_cell(parse_memory_spec("value_sum"), parse_task_spec("assoc_recall"),
                                    parse_readout_spec("auto"), 1024, 64, 16, 0);
    const CellResult o = run_cell(cell);
    INFO(o.message);
    REQUIRE(o.ok);
    REQUIRE(o.state_floats == 64);
    REQUIRE(o.slots.size() == 1);
    REQUIRE(cell_rows(o).rfind("value_sum,value_sum:decay=1,", 0) == 0);  // memory, then memory_spec
    require_matches_exact(measure(Run{"value_sum", "assoc_recall", 16, 20}), 1.0 / 16);
    const auto copy = measure_slot_mean(Run{"value_sum", "copying:episodes=50", 8, 3});
    REQUIRE(copy.mean < 0.5);
    const Spec masked = parse_task_spec("assoc_recall:control=structural_mask");
    REQUIRE_THROWS_AS(check_cell(make_cell(parse_memory_spec("value_sum"), masked, parse_readout_spec("native"),
                                           std::nullopt, 64, 8, 0)),
                      UsageError);
}
