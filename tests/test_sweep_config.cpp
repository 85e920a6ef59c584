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
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>

#include <unistd.h>

using namespace memcap;

namespace {

// One directory per process, removed at exit: ctest runs this file's cases side by side, each in
// its own process, and two writing one file could read each other's config.
struct ProcessDir {
    std::filesystem::path path = std::filesystem::temp_directory_path() / ("memcap_test_" + std::to_string(::getpid()));
    ProcessDir() { std::filesystem::create_directories(path); }
    ~ProcessDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

std::string write_config(const std::string& text) {
    static const ProcessDir dir;
    const std::string path = (dir.path / "memcap_test_sweep_config.ini").string();
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

TEST_CASE("crossing: log-spaced probes strictly inside a bracket, the bracket at the last downward crossing", "[sweep][crossing]") {
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
    // not monotone: the last mean at or above the threshold and the next (the report's rule), not the first dip
    REQUIRE(crossing_bracket({1.0, 0.85, 0.95, 0.8}, 0.9) == std::optional<std::size_t>(3));
    REQUIRE_FALSE(crossing_bracket({0.8, 0.95}, 0.9).has_value());  // the largest passes: above the grid
}

TEST_CASE("crossing: n* interpolated in log n at the last downward crossing, bounds beyond the range", "[sweep][crossing]") {
    using N = std::vector<std::int64_t>;
    // 1.0 at 8, 0.8 at 16: the line meets 0.9 half way in log n
    REQUIRE(crossing_n(N{4, 8, 16}, {1.0, 1.0, 0.8}, 0.9) == Approx(8 * std::sqrt(2.0)));
    // a dip below the threshold before the last crossing does not decide it
    REQUIRE(crossing_n(N{4, 8, 16, 32}, {1.0, 0.85, 0.95, 0.75}, 0.9) == Approx(16 * std::pow(2.0, 0.25)));
    REQUIRE(crossing_n(N{4, 8}, {0.95, 0.92}, 0.9) == std::numeric_limits<double>::infinity());
    REQUIRE(crossing_n(N{4, 8}, {0.5, 0.2}, 0.9) == -std::numeric_limits<double>::infinity());
}

namespace {

/// A deterministic stand-in for one seed's accuracy at n: a logistic fall around n = 100 plus noise.
double fake_accuracy(std::int64_t n, std::uint64_t seed, double noise) {
    std::uint64_t z = static_cast<std::uint64_t>(n) * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull + 1;
    z = (z ^ (z >> 31)) * 0x94D049BB133111EBull;
    z ^= z >> 29;
    const double u = static_cast<double>(z >> 11) / 9007199254740992.0 - 0.5;  // [-0.5, 0.5)
    const double mean = 1.0 / (1.0 + std::pow(static_cast<double>(n) / 160.0, 4.0));
    return mean + noise * u;  // a stand-in: not clamped to [0, 1], so the mean stays the curve's
}

std::vector<CurvePoint> fake_curve(const std::vector<std::int64_t>& ns, std::uint64_t seeds, double noise) {
    std::vector<CurvePoint> curve;
    for (const auto n : ns) {
        CurvePoint p;
        p.n = n;
        for (std::uint64_t s = 0; s < seeds; ++s) p.seeds.emplace_back(s, fake_accuracy(n, s, noise));
        curve.push_back(p);
    }
    return curve;
}

}  // namespace

TEST_CASE("crossing: the bootstrap interval holds n*, narrows with seeds, and is the same every time", "[sweep][crossing]") {
    const std::vector<std::int64_t> ns{32, 64, 76, 91, 108, 128, 256};
    const auto few = crossing_estimate(fake_curve(ns, 10, 0.4), 0.9);
    const auto many = crossing_estimate(fake_curve(ns, 320, 0.4), 0.9);
    for (const auto& e : {few, many}) {
        REQUIRE(std::isfinite(e.value));
        REQUIRE(e.lo <= e.value);
        REQUIRE(e.value <= e.hi);
    }
    REQUIRE(many.hi - many.lo < (few.hi - few.lo) / 2);  // 32 times the seeds: well under half the width
    REQUIRE_FALSE(few.resolved(0.05));
    REQUIRE(many.resolved(0.05));
    const auto again = crossing_estimate(fake_curve(ns, 10, 0.4), 0.9);
    REQUIRE((again.lo == few.lo && again.hi == few.hi && again.value == few.value));
    // no spread at all: the interval is the point
    const auto exact = crossing_estimate(fake_curve(ns, 10, 0.0), 0.9);
    REQUIRE(exact.lo == Approx(exact.value));  // up to rounding in the weighted means
    REQUIRE(exact.hi == Approx(exact.value));
    REQUIRE(exact.resolved(0.001));
    // slot parts: a point reads as the lowest of its parts' means, in the estimate and in every resample
    std::vector<CurvePoint> parted = fake_curve(ns, 10, 0.0);
    for (auto& p : parted) {
        auto lower = p.seeds;
        for (auto& sa : lower) sa.second -= 0.05;
        p.parts = {p.seeds, lower};
        p.seeds.clear();
    }
    std::vector<double> low_means;
    for (const auto n : ns) low_means.push_back(fake_accuracy(n, 0, 0.0) - 0.05);
    const auto low = crossing_estimate(parted, 0.9);
    REQUIRE(low.value == Approx(crossing_n(ns, low_means, 0.9)));
    REQUIRE(low.value < exact.value);
    REQUIRE(low.lo == Approx(low.value));
    REQUIRE(low.hi == Approx(low.value));
    // a bound (the largest n passes) is never resolved
    REQUIRE_FALSE(crossing_estimate(fake_curve({4, 8}, 10, 0.0), 0.9).resolved(0.5));
}

TEST_CASE("crossing rounds: the interval rule adds seeds only where n* is decided, up to its cap, until resolved",
          "[sweep][crossing]") {
    const auto path = write_config(
        "[block b]\nmemories = linear\ntasks = assoc_recall\nseeds = 10\nn = 16..1024*2\ncrossing = 0.5 0.9\n"
        "crossing_seeds = 20\ncrossing_resolve = 0.9\ncrossing_resolve_seeds = 320\n");
    const SweepConfig config = load_sweep_config(path);
    std::remove(path.c_str());
    const std::vector<CellSpec> grid = config.cells();
    const double noise = 0.4;
    CrossingPlan plan(config.blocks, grid);
    REQUIRE(plan.active());
    std::map<std::int64_t, std::map<std::uint64_t, double>> seen;  // n -> seed -> accuracy
    const auto fake_score = [&](std::int64_t n, std::uint64_t seed) {
        CellScore sc;
        sc.accuracy = fake_accuracy(n, seed, noise), sc.queries = 32, sc.ok = true;
        REQUIRE(seen[n].count(seed) == 0);  // no cell runs twice
        seen[n][seed] = sc.accuracy;
        return sc;
    };
    for (std::size_t i = 0; i < grid.size(); ++i) plan.score(0, i, fake_score(grid[i].n, grid[i].seed));
    std::size_t rounds = 0;
    while (true) {
        const auto next = plan.next_round();
        if (next.empty()) break;
        ++rounds;
        for (std::size_t i = 0; i < next.size(); ++i) {
            REQUIRE(next[i].seed < 320);
            if (i) REQUIRE(std::make_pair(next[i - 1].n, next[i - 1].seed) < std::make_pair(next[i].n, next[i].seed));
            plan.score(rounds, i, fake_score(next[i].n, next[i].seed));
        }
        REQUIRE(rounds < 20);
    }
    REQUIRE(rounds >= 3);
    // the final curve, every seed: resolved at 0.9 (the cap was room enough)
    std::vector<CurvePoint> curve;
    std::vector<std::int64_t> xs;
    std::vector<double> means;
    for (const auto& [n, by_seed] : seen) {
        CurvePoint p;
        p.n = n;
        double sum = 0;
        for (const auto& [s, a] : by_seed) p.seeds.emplace_back(s, a), sum += a;
        curve.push_back(p);
        xs.push_back(n), means.push_back(sum / static_cast<double>(by_seed.size()));
    }
    const auto e = crossing_estimate(curve, 0.9);
    REQUIRE(e.resolved(0.05));
    // seeds beyond the separation rule's cap (20) only at the two n n* is interpolated between, or
    // within two standard errors of 0.9; the grid's n far from the crossing keep the grid's 10 seeds
    const auto j = crossing_bracket(means, 0.9);
    REQUIRE(j.has_value());
    std::size_t beyond = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const std::size_t m = seen[xs[i]].size();
        if (m > 20) {
            ++beyond;
            const bool ends = i + 1 == *j || i == *j;
            REQUIRE((ends || std::fabs(means[i] - 0.9) < 0.1));
        }
        if (xs[i] <= 32 || xs[i] >= 512) REQUIRE(m == 10);
    }
    REQUIRE(beyond >= 2);
    // without the interval rule the same grid stops at the separation rule's cap
    const auto path2 = write_config(
        "[block b]\nmemories = linear\ntasks = assoc_recall\nseeds = 10\nn = 16..1024*2\ncrossing = 0.5 0.9\ncrossing_seeds = 20\n");
    const SweepConfig plain = load_sweep_config(path2);
    std::remove(path2.c_str());
    CrossingPlan plan2(plain.blocks, plain.cells());
    seen.clear();
    for (std::size_t i = 0; i < grid.size(); ++i) plan2.score(0, i, fake_score(grid[i].n, grid[i].seed));
    for (std::size_t r = 1;; ++r) {
        const auto next = plan2.next_round();
        if (next.empty()) break;
        for (std::size_t i = 0; i < next.size(); ++i) {
            REQUIRE(next[i].seed < 20);
            plan2.score(r, i, fake_score(next[i].n, next[i].seed));
        }
    }
}

TEST_CASE("crossing rounds: a task's slot parts are each resolved, and so is their lowest", "[sweep][crossing]") {
    const auto path = write_config(
        "[block b]\nmemories = delta\ntasks = overwrite_recall\nseeds = 10\nn = 16..1024*2\ncrossing = 0.9\n"
        "crossing_seeds = 20\ncrossing_resolve = 0.9\ncrossing_resolve_seeds = 640\n");
    const SweepConfig config = load_sweep_config(path);
    std::remove(path.c_str());
    const std::vector<CellSpec> grid = config.cells();
    CrossingPlan plan(config.blocks, grid);
    // slot "1" (rewritten) falls at a quarter of slot "0"'s n: the cell's mean crosses elsewhere than either
    std::map<std::int64_t, std::map<std::uint64_t, std::pair<double, double>>> seen;
    const auto fake_score = [&](std::int64_t n, std::uint64_t seed) {
        CellScore sc;
        const double a = fake_accuracy(n, seed, 0.4), b = fake_accuracy(4 * n, seed + 7777, 0.4);
        sc.slots = {{"0", a}, {"1", b}};
        sc.accuracy = (a + b) / 2, sc.queries = 64, sc.ok = true;
        seen[n][seed] = {a, b};
        return sc;
    };
    for (std::size_t i = 0; i < grid.size(); ++i) plan.score(0, i, fake_score(grid[i].n, grid[i].seed));
    for (std::size_t r = 1;; ++r) {
        const auto next = plan.next_round();
        if (next.empty()) break;
        for (std::size_t i = 0; i < next.size(); ++i) plan.score(r, i, fake_score(next[i].n, next[i].seed));
        REQUIRE(r < 20);
    }
    std::vector<CurvePoint> untouched, rewritten, lowest;
    for (const auto& [n, by_seed] : seen) {
        CurvePoint a, b, both;
        a.n = b.n = both.n = n;
        for (const auto& [s, ab] : by_seed) a.seeds.emplace_back(s, ab.first), b.seeds.emplace_back(s, ab.second);
        both.parts = {a.seeds, b.seeds};
        untouched.push_back(a), rewritten.push_back(b), lowest.push_back(both);
    }
    REQUIRE(crossing_estimate(untouched, 0.9).resolved(0.05));
    REQUIRE(crossing_estimate(rewritten, 0.9).resolved(0.05));
    REQUIRE(crossing_estimate(lowest, 0.9).resolved(0.05));
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
    // the interval rule's keys
    write_config(block("crossing = 0.5 0.9\ncrossing_resolve = 0.9\n"));
    const SweepConfig resolving = load_sweep_config(path);
    REQUIRE(resolving.blocks[0].crossing_resolve == std::vector<double>{0.9});
    REQUIRE(resolving.blocks[0].crossing_resolve_width == 0.05);
    REQUIRE(resolving.blocks[0].crossing_resolve_seeds == 80);  // 4 x crossing_seeds
    REQUIRE(resolving.canonical()["blocks"][0]["crossing_resolve_seeds"] == 80);
    REQUIRE_FALSE(config.canonical()["blocks"][0].contains("crossing_resolve"));  // a block without it keeps its manifest
    write_config(block("crossing = 0.5 0.9\ncrossing_resolve = 0.9\ncrossing_resolve_width = 0.03\ncrossing_resolve_seeds = 200\n"));
    REQUIRE(load_sweep_config(path).blocks[0].crossing_resolve_width == 0.03);
    REQUIRE(load_sweep_config(path).blocks[0].crossing_resolve_seeds == 200);
    REQUIRE(resolving.blocks[0].crossing_resolve_probes == 0);  // no reading probes unless asked
    REQUIRE_FALSE(resolving.canonical()["blocks"][0].contains("crossing_resolve_probes"));  // the manifest it had
    write_config(block("crossing = 0.5 0.9\ncrossing_resolve = 0.9\ncrossing_resolve_probes = 3\n"));
    REQUIRE(load_sweep_config(path).blocks[0].crossing_resolve_probes == 3);
    REQUIRE(load_sweep_config(path).canonical()["blocks"][0]["crossing_resolve_probes"] == 3);
    for (const char* bad : {"crossing = 0.5\ncrossing_resolve = 0.9\n", "crossing_resolve = 0.9\n",
                            "crossing = 0.9\ncrossing_resolve = 0.9\ncrossing_resolve_width = 0\n",
                            "crossing = 0.9\ncrossing_resolve = 0.9\ncrossing_resolve_width = 1\n",
                            "crossing = 0.9\ncrossing_resolve = 0.9\ncrossing_resolve_width = wide\n",
                            "crossing = 0.9\ncrossing_resolve = 0.9\ncrossing_resolve_seeds = 10\n",
                            "crossing = 0.9\ncrossing_resolve_width = 0.05\n", "crossing = 0.9\ncrossing_resolve_seeds = 100\n",
                            "crossing = 0.9\ncrossing_resolve_probes = 3\n",
                            "crossing = 0.9\ncrossing_resolve = 0.9\ncrossing_resolve_probes = 0\n",
                            "crossing = 0.9\ncrossing_resolve = 0.9\ncrossing_resolve_probes = 65\n"}) {
        write_config(block(bad));
        REQUIRE_THROWS_AS(load_sweep_config(path), UsageError);
    }
    std::remove(path.c_str());
}
