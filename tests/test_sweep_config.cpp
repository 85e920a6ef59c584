// Sweep configs: integer ranges, defaults, block order, and the cells a config names.
#include "core/error.hpp"
#include "harness/eval/readout.hpp"
#include "harness/exec/grid.hpp"
#include "harness/exec/sweep_config.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

using namespace memcap;

namespace {

std::string write_config(const std::string& text) {
    const std::string path = "memcap_test_sweep_config.ini";
    std::ofstream(path) << text;
    return path;
}

}  // namespace

TEST_CASE("integer lists take values and ranges", "[sweep][config]") {
    using V = std::vector<std::int64_t>;
    REQUIRE(parse_int_list("4 8 16", "n", 100) == V{4, 8, 16});
    REQUIRE(parse_int_list("4..64*2", "n", 100) == V{4, 8, 16, 32, 64});
    REQUIRE(parse_int_list("4..100*3", "n", 100) == V{4, 12, 36});
    REQUIRE(parse_int_list("1..10+3", "n", 100) == V{1, 4, 7, 10});
    REQUIRE(parse_int_list("2..4 9", "n", 100) == V{2, 3, 4, 9});
    REQUIRE_THROWS_AS(parse_int_list("4..200*2", "n", 100), UsageError);  // beyond the limit
    REQUIRE_THROWS_AS(parse_int_list("8..4", "n", 100), UsageError);
    REQUIRE_THROWS_AS(parse_int_list("4..8*1", "n", 100), UsageError);
    REQUIRE_THROWS_AS(parse_int_list("4..8+0", "n", 100), UsageError);
    REQUIRE_THROWS_AS(parse_int_list("", "n", 100), UsageError);
}

TEST_CASE("a block's cells are the run grid, blocks in file order, [sweep] as defaults", "[sweep][config]") {
    const auto path = write_config(
        "# two blocks\n"
        "[sweep]\n"
        "seeds = 2   ; inline comment\n"
        "d = 32\n"
        "[block second_in_name_first_in_file]\n"
        "memories = softmax linear\n"
        "tasks = assoc_recall\n"
        "budgets = 1024 natural\n"
        "n = 4..16*2\n"
        "[block b]\n"
        "memories = softmax:beta=4\n"
        "tasks = assoc_recall:noise=0.12\n"
        "n = 8\n"
        "seeds = 3\n");
    const SweepConfig config = load_sweep_config(path);
    std::remove(path.c_str());
    REQUIRE(config.name == "memcap_test_sweep_config");
    REQUIRE(config.blocks.size() == 2);
    REQUIRE(config.blocks[0].name == "second_in_name_first_in_file");
    const auto cells = config.cells();
    GridBlock grid;
    grid.memories = {parse_memory_spec("softmax"), parse_memory_spec("linear")};
    grid.tasks = {parse_task_spec("assoc_recall")};
    grid.budgets = {1024, std::nullopt};
    grid.ns = {4, 8, 16};
    grid.seeds = 2;
    grid.ds = {32};
    grid.readouts = {parse_readout_spec("auto")};
    const auto first = grid.cells();
    REQUIRE(cells.size() == first.size() + 3);
    for (std::size_t i = 0; i < first.size(); ++i) {
        CAPTURE(i);
        REQUIRE(cells[i].memory == first[i].memory);
        REQUIRE(cells[i].budget_floats == first[i].budget_floats);
        REQUIRE(cells[i].n == first[i].n);
        REQUIRE(cells[i].seed == first[i].seed);
        REQUIRE(cells[i].d == 32);
    }
    REQUIRE(cells.back().task.canonical() == parse_task_spec("assoc_recall:noise=0.12").canonical());
    REQUIRE(cells.back().seed == 2);
    REQUIRE(cells.back().d == 32);
    REQUIRE_FALSE(cells.back().budget_floats.has_value());
    // the canonical form fills in every default, so a reworded config compares equal
    REQUIRE(config.canonical()["blocks"][1]["memories"][0] == "softmax:beta=4");
}
