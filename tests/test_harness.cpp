// The harness: CSV shape, thread-count independence, error rows, aggregation.
#include "harness/results/aggregate.hpp"
#include "harness/exec/runner.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

using namespace memcap;

namespace {

std::string run_to_string(const std::vector<CellSpec>& cells, int threads) {
    std::string out = kCsvHeader;
    run_cells(cells, threads, false, [&](std::size_t, const std::string& rows) { out += rows; });
    return out;
}

std::vector<CellSpec> small_grid() {
    return expand_grid({parse_memory_spec("softmax"), parse_memory_spec("linear:phi=dpfp")},
                       {parse_task_spec("assoc_recall")}, {std::nullopt, 1024}, {8, 64}, 3, 32, parse_readout_spec("native"));
}

}  // namespace

TEST_CASE("every row has the header's number of fields", "[harness][csv]") {
    const std::string csv = run_to_string(small_grid(), 1);
    const std::size_t ncols = split_csv_line(std::string(kCsvHeader, std::strlen(kCsvHeader) - 1)).size();
    std::size_t start = 0, rows = 0;
    while (start < csv.size()) {
        const auto end = csv.find('\n', start);
        REQUIRE(split_csv_line(csv.substr(start, end - start)).size() == ncols);
        start = end + 1;
        ++rows;
    }
    REQUIRE(rows == 1 + 2 * 2 * 2 * 3);
}

TEST_CASE("the CSV is byte-identical at 1 and 2 threads", "[harness][determinism]") {
    const auto cells = small_grid();
    REQUIRE(run_to_string(cells, 1) == run_to_string(cells, 2));
}

TEST_CASE("a failed cell is an error row, not a silent number", "[harness][csv]") {
    CellSpec c{parse_memory_spec("softmax"), parse_task_spec("assoc_recall"), parse_readout_spec("native"), 10, 64, 8, 0};  // budget < 128
    const CellOutcome o = run_cell(c);
    REQUIRE_FALSE(o.ok);
    const std::string row = csv_rows(c, o);
    const auto f = split_csv_line(row.substr(0, row.size() - 1));
    REQUIRE(f.size() == split_csv_line(std::string(kCsvHeader, std::strlen(kCsvHeader) - 1)).size());
    REQUIRE(f[15] == "error");
    REQUIRE(f[16].find("minimum") != std::string::npos);
    REQUIRE(f[12].empty());
}

TEST_CASE("quoting round-trips specs that contain commas", "[harness][csv]") {
    const std::string spec = "linear:phi=proj,nu=1";
    REQUIRE(split_csv_line(csv_field(spec) + ",x") == std::vector<std::string>{spec, "x"});
    REQUIRE(split_csv_line(csv_field("a\"b")) == std::vector<std::string>{"a\"b"});
}

TEST_CASE("aggregation gives the mean and spread over seeds", "[harness][aggregate]") {
    const auto cells = expand_grid({parse_memory_spec("linear")}, {parse_task_spec("assoc_recall")}, {std::nullopt},
                                   {256}, 5, 64, parse_readout_spec("native"));
    const std::string path = "aggregate_test_input.csv";
    {
        std::ofstream f(path);
        f << run_to_string(cells, 2);
    }
    const auto groups = summarise_csv(path);
    std::remove(path.c_str());
    REQUIRE(groups.size() == 1);
    const auto& g = groups[0];
    REQUIRE(g.seeds == 5);
    REQUIRE(g.queries == 5 * 32);
    double sum = 0;
    for (const auto& c : cells) {
        const auto o = run_cell(c);
        sum += static_cast<double>(o.slots[0].correct) / 32.0;
    }
    REQUIRE(g.mean == Approx(sum / 5).epsilon(1e-12));
    REQUIRE(g.ci_lo <= g.mean);
    REQUIRE(g.ci_hi >= g.mean);
    REQUIRE(g.sd > 0);
}
