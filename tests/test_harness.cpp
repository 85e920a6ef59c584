// The harness: CSV shape, thread-count independence, error rows, aggregation.
#include "core/error.hpp"
#include "core/spin_lock.hpp"
#include "harness/eval/readout.hpp"
#include "harness/exec/grid.hpp"
#include "harness/exec/memory_gate.hpp"
#include "harness/exec/pipeline.hpp"
#include "harness/exec/runner.hpp"
#include "harness/exec/tuning.hpp"
#include "harness/results/aggregate.hpp"
#include "harness/results/csv.hpp"
#include "harness/results/stats.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cmath>
#include <optional>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <cstring>
#include <set>
#include <thread>
#include <fstream>

using namespace memcap;

namespace {

/// The CSV of `cells` as the front doors make it: checked, tuned, run in cell order.
std::string run_to_string(const std::vector<CellSpec>& cells, int threads) {
    std::string out = cell_header();
    Pipeline pipeline(cells);
    pipeline.tune(threads, false);
    pipeline.run_in_order(threads, false, [&](std::size_t, const std::string& rows) { out += rows; });
    return out;
}

std::vector<CellSpec> small_grid() {
    GridBlock g;
    g.memories = {parse_memory_spec("softmax"), parse_memory_spec("linear:phi=dpfp")};
    g.tasks = {parse_task_spec("assoc_recall")};
    g.budgets = {std::nullopt, 1024};
    g.ns = {8, 64};
    g.seeds = 3;
    g.ds = {32};
    g.readouts = {parse_readout_spec("native")};
    return g.cells();
}

}  // namespace

TEST_CASE("every row has the header's number of fields", "[harness][csv]") {
    const std::string csv = run_to_string(small_grid(), 1);
    const std::size_t ncols = cell_columns().size();
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

TEST_CASE("a cell that cannot be built is refused before any work, not written as a row", "[harness][csv]") {
    const CellSpec c = make_cell(parse_memory_spec("softmax"), parse_task_spec("assoc_recall"), parse_readout_spec("native"),
                                 10, 64, 8, 0);  // budget < 128
    REQUIRE_THROWS_WITH(check_cell(c), Catch::Contains("minimum"));
    REQUIRE_THROWS_AS(check_cells({c}), UsageError);
}

TEST_CASE("a measured failure is an error row with empty measurement columns", "[harness][csv]") {
    const CellSpec c = make_cell(parse_memory_spec("softmax"), parse_task_spec("assoc_recall"), parse_readout_spec("native"),
                                 std::nullopt, 64, 8, 0);
    CellOutcome failed;
    failed.ok = false;
    failed.message = "non-finite read in episode 0";
    const std::string row = cell_rows(cell_result(c, failed, 0.125));
    const auto f = split_csv_line(row.substr(0, row.size() - 1));
    REQUIRE(f.size() == cell_columns().size());
    const CsvColumns col(cell_header().substr(0, cell_header().size() - 1), cell_columns(), "header");
    REQUIRE(f[col["status"]] == "error");
    REQUIRE(f[col["message"]] == failed.message);
    REQUIRE(f[col["accuracy_frac"]].empty());
    REQUIRE(f[col["chance_frac"]].empty());
}

namespace {

/// cell_rows through CsvRecord, column by name: the reference the direct writer must match.
std::string rows_by_record(const CellResult& r) {
    CsvRecord lead(cell_columns());
    lead.set("memory", memory_name(r.memory_spec)).set("memory_spec", r.memory_spec).set("task_spec", r.task_spec).set("readout", r.readout);
    lead.set("budget_floats", r.budget_floats ? std::to_string(*r.budget_floats) : std::string());
    lead.set("d", std::to_string(r.d)).set("n", std::to_string(r.n)).set("seed", std::to_string(r.seed)).set("tuned", r.tuned);
    if (!r.ok) return CsvRecord(lead).set("status", "error").set("message", r.message).line();
    lead.set("state_floats", std::to_string(r.state_floats)).set("param_floats", std::to_string(r.param_floats));
    lead.set("state_bits", std::to_string(r.state_bits)).set("chance_frac", format_real(r.chance_frac)).set("status", "ok");
    std::string out;
    for (const auto& s : r.slots) {
        const double q = static_cast<double>(s.queries);
        CsvRecord row(lead);
        row.set("slot", s.slot < 0 ? std::string() : std::to_string(s.slot));
        row.set("queries", std::to_string(s.queries)).set("correct", std::to_string(s.correct));
        row.set("accuracy_frac", format_real(static_cast<double>(s.correct) / q));
        row.set("target_dist_mean", std::isnan(s.target_dist_sum) ? std::string() : format_sig(s.target_dist_sum / q));
        row.set("target_cos_mean", std::isnan(s.target_cos_sum) ? std::string() : format_sig(s.target_cos_sum / q));
        if (r.abstention) {
            const Abstention& a = *r.abstention;
            const auto rate = [](double x) { return std::isnan(x) ? std::string() : format_sig(x); };
            row.set("absent_queries", std::to_string(a.absent)).set("threshold", format_sig(a.threshold));
            row.set("false_accept_frac", rate(a.false_accept)).set("present_accept_frac", rate(a.present_accept));
            row.set("balanced_accuracy_frac", rate(a.balanced)).set("auc_frac", rate(a.auc));
        }
        out += row.line();
    }
    return out;
}

}  // namespace

TEST_CASE("cell_rows writes the bytes a record filled column by name gives", "[harness][csv]") {
    CellResult r;
    r.memory_spec = "linear:phi=proj,nu=1";
    r.task_spec = "assoc_recall:queries=32,noise=0";
    r.readout = "probe:train=300,ridge=1e-06";
    r.d = 64, r.n = 512, r.seed = 18446744073709551615ULL, r.chance_frac = 1.0 / 512;
    r.state_floats = 4096, r.state_bits = 131072, r.param_floats = 12;
    r.tuned = "d=64,beta=0.5";
    r.slots = {{-1, 32, 29, 1.5, 0.75}, {3, 7, 0, std::nan(""), std::nan("")}, {12, 3, 3, -0.0, 1e-300}};
    for (const bool budget : {false, true}) {
        r.budget_floats = budget ? std::optional<std::int64_t>(16384) : std::nullopt;
        CHECK(cell_rows(r) == rows_by_record(r));
        r.abstention = Abstention{0.25, 30, 2, 0.5, std::nan(""), 0.75, 1.0};
        CHECK(cell_rows(r) == rows_by_record(r));
        r.abstention.reset();
    }
    r.ok = false;
    r.message = "non-finite read, \"episode\" 0\nat hop 2";
    r.tuned.clear();
    CHECK(cell_rows(r) == rows_by_record(r));
    r.slots.clear(), r.ok = true;
    CHECK(cell_rows(r).empty());
}

TEST_CASE("format_sig writes the characters printf's %.6g writes", "[harness][csv]") {
    // to_chars with a precision is defined as printf's %g; checked here over magnitudes,
    // roundings at the sixth digit, signed zeros, subnormals, infinities and NaNs.
    std::vector<double> xs = {0.0, -0.0, 1.0, -1.0, 0.5, 1.0 / 3.0, 2.0 / 3.0, 999999.5, 9999995.0, 0.00012345649999,
                              123456.5, 1e-5, 1e-4, 1e15, 1e16, 1e-300, 4.9e-324, -2.2250738585072014e-308,
                              1.7976931348623157e308, std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(), std::nan(""), -std::nan("")};
    std::uint64_t state = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 20000; ++i) {  // random bit patterns (every exponent) and random numbers near 1
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        double x = 0;
        const std::uint64_t bits = state ^ (state >> 29);
        std::memcpy(&x, &bits, sizeof x);
        xs.push_back(x);
        xs.push_back(static_cast<double>(bits >> 11) / 9007199254740992.0);
    }
    for (const double x : xs) {
        char want[64];
        std::snprintf(want, sizeof want, "%.6g", x);
        INFO("x = " << std::hexfloat << x);
        REQUIRE(format_sig(x) == want);
    }
}

TEST_CASE("quoting round-trips specs that contain commas", "[harness][csv]") {
    const std::string spec = "linear:phi=proj,nu=1";
    REQUIRE(split_csv_line(csv_field(spec) + ",x") == std::vector<std::string>{spec, "x"});
    REQUIRE(split_csv_line(csv_field("a\"b")) == std::vector<std::string>{"a\"b"});
}

TEST_CASE("a record finds its columns in any order, again and twice, an unknown name is refused", "[harness][csv]") {
    // CsvRecord::set looks after the column set last first: out of order, backwards and a
    // repeated column must land where the header says, whatever it looked at before.
    const auto& cols = cell_columns();
    const CsvColumns at(cell_header().substr(0, cell_header().size() - 1), cols, "test");
    CsvRecord r(cols);
    r.set("seed", "7").set("memory", "linear").set("n", "8").set("memory", "delta").set("status", "ok").set("n", "16");
    const std::string line = r.line();
    const auto f = split_csv_line(line.substr(0, line.size() - 1));
    REQUIRE(f.size() == cols.size());
    CHECK(f[at["memory"]] == "delta");
    CHECK(f[at["n"]] == "16");
    CHECK(f[at["seed"]] == "7");
    CHECK(f[at["status"]] == "ok");
    CHECK(f[at["d"]].empty());
    // a prefix of a column's name is not that column
    REQUIRE_THROWS_AS(r.set("see", "1"), std::logic_error);
    REQUIRE_THROWS_AS(r.set("seed_x", "1"), std::logic_error);
}

TEST_CASE("aggregation gives the mean and spread over seeds", "[harness][aggregate]") {
    GridBlock grid;
    grid.memories = {parse_memory_spec("linear")};
    grid.tasks = {parse_task_spec("assoc_recall")};
    grid.ns = {256};
    grid.seeds = 5;
    grid.readouts = {parse_readout_spec("native")};
    const auto cells = grid.cells();
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

TEST_CASE("accuracy_se_frac: the seeds' spread with one seed's binomial floor, over the seeds that ran", "[harness][aggregate]") {
    // Three seeds all right (sd 0: the floor decides, p clamped to 1 - 1/32) and one failed seed,
    // which counts in `seeds` but not in the standard error; then two seeds whose spread beats the floor.
    const std::string path = "aggregate_se_input.csv";
    {
        std::ofstream f(path);
        f << cell_header();
        CsvRecord r(cell_columns());
        r.set("memory_spec", "softmax:beta=16").set("readout", "native").set("budget_floats", "1024")
            .set("state_floats", "1024").set("d", "64").set("queries", "32").set("chance_frac", "0.03125");
        for (int seed = 0; seed < 4; ++seed)
            f << CsvRecord(r).set("task_spec", "a").set("n", "8").set("seed", std::to_string(seed))
                     .set("accuracy_frac", seed < 3 ? "1" : "").set("status", seed < 3 ? "ok" : "error").line();
        for (int seed = 0; seed < 2; ++seed)
            f << CsvRecord(r).set("task_spec", "b").set("n", "8").set("seed", std::to_string(seed))
                     .set("accuracy_frac", seed == 0 ? "0.5" : "1").set("status", "ok").line();
    }
    const auto groups = summarise_csv(path);
    std::remove(path.c_str());
    REQUIRE(groups.size() == 2);
    const double q = 32, p = 1 - 1 / q;
    REQUIRE(groups[0].seeds == 4);
    REQUIRE(groups[0].errors == 1);
    REQUIRE(groups[0].sd == 0);
    REQUIRE(groups[0].se == Approx(std::sqrt(p * (1 - p) / q) / std::sqrt(3.0)).epsilon(1e-12));
    REQUIRE(groups[1].se == Approx(groups[1].sd / std::sqrt(2.0)).epsilon(1e-12));
    REQUIRE(groups[1].se > std::sqrt(0.75 * 0.25 / q) / std::sqrt(2.0));
    REQUIRE(accuracy_standard_error(0.75, 0.01, 2, q) == Approx(std::sqrt(0.75 * 0.25 / q) / std::sqrt(2.0)));
    const std::string csv = summary_csv(groups);
    const CsvColumns col(header_line(summary_columns()).substr(0, header_line(summary_columns()).size() - 1),
                         summary_columns(), "summary");
    const auto first = split_csv_line(csv.substr(csv.find('\n') + 1, csv.find('\n', csv.find('\n') + 1) - csv.find('\n') - 1));
    REQUIRE(first[col["accuracy_se_frac"]] == format_sig(groups[0].se));
}

TEST_CASE("the memory gate: cells in flight hold at most its budget, a larger cell runs alone", "[harness][memory_gate]") {
    MemoryGate gate(10.0);
    std::atomic<int> inside{0}, most{0};
    const auto cell = [&](double bytes) {
        const MemoryGate::Hold hold(gate, bytes);
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        --inside;
    };
    {
        std::vector<std::thread> threads;
        for (int i = 0; i < 4; ++i) threads.emplace_back(cell, 6.0);  // two never fit together
        for (auto& t : threads) t.join();
    }
    REQUIRE(most.load() == 1);
    REQUIRE(gate.high_water() == 6.0);
    most = 0;
    {
        std::vector<std::thread> threads;
        for (int i = 0; i < 4; ++i) threads.emplace_back(cell, 2.0);  // all four fit
        threads.emplace_back(cell, 25.0);                             // above the budget: alone, no deadlock
        for (auto& t : threads) t.join();
    }
    REQUIRE(gate.high_water() == 25.0);  // the large cell held the gate alone (25 + 2 would exceed it)
    REQUIRE(MemoryGate().limit() > 0);
}

TEST_CASE("SpinLock: one holder at a time, and condition_variable_any waits on it", "[harness][memory_gate]") {
    SpinLock lock;
    long counter = 0;  // not atomic: only the lock keeps the increments from racing
    {
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&] {
                for (int i = 0; i < 20000; ++i) {
                    const std::lock_guard<SpinLock> guard(lock);
                    ++counter;
                }
            });
        for (auto& t : threads) t.join();
    }
    REQUIRE(counter == 80000);
    REQUIRE(lock.try_lock());
    REQUIRE_FALSE(lock.try_lock());
    lock.unlock();
    std::condition_variable_any ready;
    bool go = false;
    std::thread waiter([&] {
        std::unique_lock<SpinLock> held(lock);
        ready.wait(held, [&] { return go; });
        ++counter;
    });
    {
        const std::lock_guard<SpinLock> guard(lock);
        go = true;
    }
    ready.notify_all();
    waiter.join();
    REQUIRE(counter == 80001);
}

TEST_CASE("check_cells resolves each distinct cell once, its seeds share the resolution, runs through it give run_cell's rows",
          "[harness][resolve]") {
    const auto cells = small_grid();
    const ResolvedCells resolved = check_cells(cells);
    REQUIRE(resolved.size() == cells.size());
    std::set<const ResolvedCell*> distinct;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        REQUIRE(resolved[i]);
        distinct.insert(resolved[i].get());
        if (i > 0) CHECK((resolved[i] == resolved[i - 1]) == same_but_seed(cells[i], cells[i - 1]));
        const ResolvedCell& r = *resolved[i];
        CHECK(r.memory == &find_memory(cells[i].memory.name()));
        CHECK(r.readout == &find_readout(cells[i].readout.name()));
        CHECK(r.size.state_floats == memory_size(cells[i].memory, r.shape).state_floats);
        CHECK(r.peak_bytes == check_cell_structure(cells[i]));
    }
    CHECK(distinct.size() == 2 * 2 * 2);  // memories x budgets x n; 3 seeds each
    std::string by_cell = cell_header(), handed = cell_header();
    for (const auto& c : cells) by_cell += cell_rows(run_cell(c));
    run_cells(cells, resolved, 2, false, [&](std::size_t, const std::string& rows) { handed += rows; });
    CHECK(handed == by_cell);
    CHECK(handed == run_to_string(cells, 1));
}

TEST_CASE("a tuned cell runs through its chosen candidate's resolution", "[harness][resolve]") {
    GridBlock g;
    g.memories = {parse_memory_spec("softmax"), parse_memory_spec("softmax:beta=best")};
    g.tasks = {parse_task_spec("assoc_recall")};
    g.budgets = {512};
    g.ns = {16};
    g.seeds = 2;
    g.tuning_seeds = 1;
    g.set_widths("best:8..32*2", "d");
    g.readouts = {parse_readout_spec("auto")};
    auto cells = g.cells();
    Races races;
    ResolvedCells resolved = check_cells(cells, &races);
    for (const auto& r : resolved) CHECK(!r);  // choices still to make: races built, nothing resolved
    CHECK(races.size() == 2);  // one race per group (memory), its seeds share it
    auto plain = cells;
    resolve_tuning(cells, races, resolved, 1, false);
    Races plain_races;
    ResolvedCells plain_resolved = check_cells(plain, &plain_races);
    resolve_tuning(plain, plain_races, plain_resolved, 2, false);
    std::string handed = cell_header();
    run_cells(cells, resolved, 1, false, [&](std::size_t, const std::string& rows) { handed += rows; });
    for (std::size_t i = 0; i < cells.size(); ++i) {
        REQUIRE(resolved[i]);
        CHECK(resolved[i]->cell.d == cells[i].d);
        CHECK(resolved[i]->cell.memory == cells[i].memory);
        CHECK(cell_label(cells[i]) == cell_label(plain[i]));
        CHECK_FALSE(cells[i].tuned.empty());
    }
    CHECK(handed == run_to_string(plain, 1));  // the `tuned` column and every number as without the resolutions
}

TEST_CASE("one grid builder: the three front doors' spellings give the same cells and the same refusals",
          "[harness][grid]") {
    GridRequest r;
    r.memories = {"softmax linear:phi=dpfp"}, r.tasks = {"assoc_recall"}, r.ns = {"4..16*2"};
    r.budgets = {"256..1024*4 natural"}, r.seeds = "2", r.d = "16";
    const auto run = build_grid(r, kRunKeys).cells(), py = build_grid(r, kPythonKeys).cells(),
               sweep = build_grid(r, kSweepKeys, "b").cells();
    REQUIRE(run.size() == 2 * 3 * 3 * 2);
    REQUIRE(py.size() == run.size());
    REQUIRE(sweep.size() == run.size());
    for (std::size_t i = 0; i < run.size(); ++i) {
        CHECK(cell_label(run[i]) == cell_label(py[i]));
        CHECK(cell_label(run[i]) == cell_label(sweep[i]));
    }
    CHECK(run[0].budget_floats == std::optional<std::int64_t>(256));
    CHECK(run[6].budget_floats == std::optional<std::int64_t>(1024));
    CHECK_FALSE(run[12].budget_floats);
    const auto refusal = [&](GridRequest bad, const GridKeys& keys) {
        try {
            build_grid(bad, keys);
        } catch (const UsageError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    GridRequest twice = r;
    twice.ns = {"8 4..16*2"};
    CHECK(refusal(twice, kRunKeys) == "--n: '8' is given twice (each cell would run twice); give it once");
    CHECK(refusal(twice, kPythonKeys) == "n: '8' is given twice (each cell would run twice); give it once");
    twice = r;
    twice.memories = {"softmax softmax:beta=16"};
    CHECK(refusal(twice, kRunKeys) == "--memory: 'softmax:beta=16' is given twice (each cell would run twice); give it once");
    twice = r;
    twice.readouts = {"auto native"};
    CHECK(refusal(twice, kSweepKeys).find("readout: 'native' is given twice for memory 'softmax:beta=16'") == 0);
    GridRequest tuned = r;
    tuned.on_tuning_seeds = true;
    const auto on_tuning = build_grid(tuned, kRunKeys).cells();
    CHECK(on_tuning[0].seed == kTuningSeedBase);
    CHECK(on_tuning[1].seed == kTuningSeedBase + 1);
    tuned.d = "best";
    CHECK(refusal(tuned, kRunKeys).find("--on-tuning-seeds: the tuning seeds cannot score") == 0);
}

TEST_CASE("work items group the cells whose shared_episode_key is the same, in the order of their first cell",
          "[harness][runner]") {
    GridRequest r;
    r.memories = {"softmax linear:phi=dpfp delta rotation"}, r.tasks = {"assoc_recall assoc_recall:queries=8 lag_recall"};
    r.ns = {"4 8"}, r.seeds = "3", r.d = "16";
    const auto cells = build_grid(r, kRunKeys).cells();
    const ResolvedCells resolved = check_cells(cells);
    std::vector<std::size_t> order(cells.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = (i * 7 + 3) % order.size();  // 7 is prime to the count
    REQUIRE(std::set<std::size_t>(order.begin(), order.end()).size() == cells.size());
    const WorkItems items = group_by_shared_episode(
        order, [&](std::size_t i) -> const ResolvedCell& { return *resolved[i]; }, [&](std::size_t i) { return cells[i].seed; });
    // the definition: the keys' text, items in the order of their first cell
    std::vector<std::vector<std::size_t>> expected;
    std::vector<std::string> keys;
    for (const std::size_t i : order) {
        const std::string key = shared_episode_key(*resolved[i], cells[i].seed);
        const auto at = std::find(keys.begin(), keys.end(), key);
        if (key.empty() || at == keys.end()) {
            expected.push_back({i}), keys.push_back(key.empty() ? "(alone " + std::to_string(i) + ")" : key);
        } else {
            expected[static_cast<std::size_t>(at - keys.begin())].push_back(i);
        }
    }
    CHECK(items.cells == expected);
    std::size_t alone = 0, shared = 0;
    for (const auto& item : items.cells) (item.size() == 1 ? alone : shared) += 1;
    CHECK(alone > 0);   // the rotation's cells (read by the probe)
    CHECK(shared > 0);  // the other memories' cells of one task, n and seed
    REQUIRE(items.peak.size() == items.cells.size());
    for (std::size_t k = 0; k < items.cells.size(); ++k)
        for (const std::size_t i : items.cells[k]) CHECK(items.peak[k] >= resolved[i]->peak_bytes);
}
