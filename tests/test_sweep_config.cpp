// Sweep configs: integer ranges, defaults, block order, and the cells a config names.
#include "core/error.hpp"
#include "harness/eval/readout.hpp"
#include "harness/exec/crossing.hpp"
#include "harness/exec/grid.hpp"
#include "harness/exec/sweep_config.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <cmath>
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

TEST_CASE("crossing: log-spaced probes strictly inside a bracket, the bracket at the first mean below", "[sweep][crossing]") {
    using V = std::vector<std::int64_t>;
    REQUIRE(crossing_probe_sizes(4, 16, 2) == V{6, 10});  // 4 * 4^(1/3), 4 * 4^(2/3)
    REQUIRE(crossing_probe_sizes(4, 8, 3) == V{5, 6, 7});
    REQUIRE(crossing_probe_sizes(4, 5, 3).empty());       // nothing strictly inside
    REQUIRE(crossing_probe_sizes(4, 6, 5) == V{5});       // distinct
    for (const auto n : crossing_probe_sizes(1024, 4096, 7)) REQUIRE((n > 1024 && n < 4096));
    const std::vector<double> means{1.0, 0.95, 0.8, std::nan(""), 0.2};
    REQUIRE(crossing_bracket(means, 0.9) == std::optional<std::size_t>(2));
    REQUIRE(crossing_bracket(means, 0.99) == std::optional<std::size_t>(1));
    REQUIRE(crossing_bracket(means, 0.5) == std::optional<std::size_t>(3));  // NaN counts as below
    REQUIRE_FALSE(crossing_bracket({0.3, 0.2}, 0.9).has_value());              // the first is below: none
    REQUIRE_FALSE(crossing_bracket({0.95, 0.92}, 0.9).has_value());            // never below: none
}

TEST_CASE("crossing keys: thresholds sorted, defaults, and bad values refused", "[sweep][crossing]") {
    const auto block = [](const std::string& extra) {
        return "[block b]\nmemories = linear\ntasks = assoc_recall\nseeds = 5\nn = 4 16 64\n" + extra;
    };
    const auto path = write_config(block("crossing = 0.99 0.5 0.9\n"));
    const SweepConfig config = load_sweep_config(path);
    REQUIRE(config.blocks[0].crossing == std::vector<double>{0.5, 0.9, 0.99});
    REQUIRE(config.blocks[0].crossing_probes == 3);
    REQUIRE(config.blocks[0].crossing_seeds == 20);  // 4 x seeds
    for (const char* bad : {"crossing = 1\n", "crossing = 0\n", "crossing = -0.5\n", "crossing = nan\n", "crossing = 0.9x\n",
                            "crossing = 0.9 0.9\n", "crossing = 0.9\ncrossing_probes = 0\n", "crossing = 0.9\ncrossing_seeds = 4\n",
                            "crossing_seeds = 40\n"}) {
        write_config(block(bad));
        REQUIRE_THROWS_AS(load_sweep_config(path), UsageError);
    }
    write_config("[block b]\nmemories = linear\ntasks = assoc_recall\nn = 64\ncrossing = 0.9\n");
    REQUIRE_THROWS_AS(load_sweep_config(path), UsageError);
    std::remove(path.c_str());
}
