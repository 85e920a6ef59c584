// `memcap theory` (harness/results/theory_table.hpp): the predictions it writes are the
// models of memories/theory.hpp at each summary row's own setting, it says where a model
// does not apply, its capacity lines follow the models, and bad input exits 2 leaving no file;
// and `memcap aggregate` keeps frontier (tuned) rows apart from the fixed-d frame's.
#include "harness/results/csv.hpp"
#include "memories/theory.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Row = std::map<std::string, std::string>;

namespace {

fs::path scratch() {
    const fs::path dir = fs::temp_directory_path() / ("memcap_theory_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir;
}

int run_memcap(const std::string& args) {
    const int status = std::system((std::string(MEMCAP_BINARY) + " " + args + " 2>/dev/null").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<Row> read_rows(const fs::path& path) {
    std::ifstream in(path);
    std::string line;
    REQUIRE(std::getline(in, line));
    const auto names = memcap::split_csv_line(line);
    std::vector<Row> rows;
    while (std::getline(in, line)) {
        const auto f = memcap::split_csv_line(line);
        REQUIRE(f.size() == names.size());
        Row r;
        for (std::size_t i = 0; i < f.size(); ++i) r[names[i]] = f[i];
        rows.push_back(r);
    }
    return rows;
}

const Row& find(const std::vector<Row>& rows, const std::string& memory, const std::string& budget, const std::string& d,
                const std::string& n) {
    for (const auto& r : rows)
        if (r.at("memory_spec") == memory && r.at("budget_floats") == budget && r.at("d") == d && r.at("n") == n) return r;
    FAIL("no row " << memory << " B=" << budget << " d=" << d << " n=" << n);
    throw;
}

// A summary as `memcap aggregate` writes it: each model's exact case, the grid's equivalent
// one, and one row of each kind the models do not describe.
const char* const kSummary =
    "memory_spec,task_spec,readout,budget_floats,state_floats,d,n,slot,seeds,errors,queries,accuracy_mean_frac,"
    "accuracy_sd_frac,accuracy_se_frac,accuracy_ci95_lo_frac,accuracy_ci95_hi_frac,chance_frac,target_dist_mean,tuned\n"
    "hrr,\"assoc_recall:queries=32,noise=0,cosine=1,control=none\",native,64,64,64,16,,10,0,320,0.6,0.05,0.0274,0.56,0.64,0.0625,1,d\n"
    "hrr,\"assoc_recall:queries=32,noise=0,cosine=1,control=none\",native,256,256,64,16,,10,0,320,0.9,0.05,0.02,0.86,0.94,0.0625,1,\n"
    "hrr,\"assoc_recall:queries=32,noise=0,cosine=0.72,control=none\",native,64,64,64,16,,10,0,320,0.3,0.05,0.02,0.26,0.34,0.0625,1,d\n"
    "\"linear:phi=proj,nu=1\",\"assoc_recall:queries=32,noise=0,cosine=1,control=none\",native,256,256,16,32,,10,0,320,0.8,0.05,0.02,0.76,0.84,0.03125,1,d\n"
    "\"linear:phi=proj,nu=1\",\"assoc_recall:queries=32,noise=0,cosine=1,control=none\",native,256,256,8,16,,10,0,320,0.7,0.05,0.02,0.66,0.74,0.0625,1,d\n"
    "\"linear:phi=proj,nu=1\",\"assoc_recall:queries=32,noise=0,cosine=1,control=none\",native,256,256,64,16,,10,0,320,0.2,0.05,0.02,0.16,0.24,0.0625,1,\n"
    "softmax:beta=16,\"assoc_recall:queries=32,noise=0,cosine=1,control=none\",native,256,128,8,8,,10,0,320,1,0,0.02,1,1,0.125,0.1,\"d,beta\"\n"
    "softmax:beta=16,\"assoc_recall:queries=32,noise=0,cosine=1,control=none\",native,256,256,16,16,,10,0,320,0.5,0.05,0.02,0.46,0.54,0.0625,1,\"d,beta\"\n"
    "\"softmax:beta=16,null=0\",\"assoc_recall:queries=32,noise=0,cosine=1,control=none\",native,256,256,8,16,,10,0,320,0.9,0.05,0.02,0.86,0.94,0.0625,1,\n"
    "\"softmax:beta=16,null=0\",\"assoc_recall:queries=32,noise=0,cosine=1,control=none\",native,256,256,8,15,,10,0,320,0.9,0.05,0.02,0.86,0.94,0.0667,1,\n"
    "\"delta:beta=1,phi=proj,nu=1\",\"assoc_recall:queries=32,noise=0,cosine=1,control=none\",native,256,256,16,16,,10,0,320,0.5,0.05,0.02,0.46,0.54,0.0625,1,d\n";

double num(const Row& r, const std::string& column) { return std::stod(r.at(column)); }

}  // namespace

TEST_CASE("theory command: predictions are the models at each row's setting", "[theory][cli]") {
    // The sanitizer build (MEMCAP_TEST_SANITIZED=1, tests/CMakeLists.txt), where the capacity
    // lines' root finding runs about 14 times slower, draws the lines from the summary's rows at
    // 64 floats alone (a second run; the predictions come from the whole summary without lines):
    // with the lines at 64 and 256 this test took 108 s there, the sanitizer ctest's longest.
    const bool sanitized = std::getenv("MEMCAP_TEST_SANITIZED") != nullptr;
    const fs::path dir = scratch();
    { std::ofstream(dir / "summary.csv") << kSummary; }
    if (sanitized) {
        REQUIRE(run_memcap("theory " + (dir / "summary.csv").string() + " --out " + (dir / "pred.csv").string()) == 0);
        std::istringstream all(kSummary);
        std::ofstream small(dir / "summary64.csv");
        for (std::string line; std::getline(all, line);)
            if (line.rfind("memory_spec,", 0) == 0 || line.find(",native,64,") != std::string::npos) small << line << "\n";
        small.close();
        REQUIRE(run_memcap("theory " + (dir / "summary64.csv").string() + " --out " + (dir / "pred64.csv").string() +
                           " --capacity " + (dir / "cap.csv").string() + " --max-budget 64") == 0);
    } else {
        REQUIRE(run_memcap("theory " + (dir / "summary.csv").string() + " --out " + (dir / "pred.csv").string() +
                           " --capacity " + (dir / "cap.csv").string() + " --max-budget 1024") == 0);
    }
    const auto rows = read_rows(dir / "pred.csv");
    REQUIRE(rows.size() == 10);  // every row but the delta rule's

    const Row& hrr = find(rows, "hrr", "64", "64", "16");
    CHECK(hrr.at("applies") == "exact");
    CHECK(hrr.at("frame") == "frontier");
    const double model = memcap::theory::hrr_recall(16, 64, 16);
    CHECK(num(hrr, "model_accuracy_frac") == Approx(model).epsilon(1e-5));
    CHECK(num(hrr, "residual_points") == Approx(100 * (model - 0.6)).epsilon(1e-4));
    // the standard error is the summary's accuracy_se_frac (aggregate's one rule), not recomputed
    CHECK(num(hrr, "measured_se_frac") == Approx(0.0274).epsilon(1e-9));
    CHECK(num(hrr, "residual_se") == Approx((model - 0.6) / 0.0274).epsilon(1e-4));

    const Row& projected = find(rows, "hrr", "256", "64", "16");
    CHECK(projected.at("applies") == "no");
    CHECK(projected.at("frame") == "fixed");
    CHECK(projected.at("model_accuracy_frac").empty());

    bool noisy_seen = false;
    for (const auto& r : rows)
        if (r.at("memory_spec") == "hrr" && r.at("task_spec").find("cosine=0.72") != std::string::npos) {
            noisy_seen = true;
            CHECK(r.at("applies") == "approx");
            CHECK(num(r, "noise_sigma") == Approx(std::sqrt((1 / (0.72 * 0.72) - 1) / 64)).epsilon(1e-5));
            CHECK(num(r, "model_accuracy_frac") < model);  // noise costs accuracy
        }
    CHECK(noisy_seen);

    const Row& grid = find(rows, "linear:phi=proj,nu=1", "256", "16", "32");
    CHECK(grid.at("applies") == "exact");
    CHECK(num(grid, "model_accuracy_frac") == Approx(memcap::theory::grid_recall(32, 16, 0.0)).epsilon(1e-5));
    const Row& wide = find(rows, "linear:phi=proj,nu=1", "256", "8", "16");
    CHECK(wide.at("applies") == "equivalent");
    CHECK(num(wide, "model_accuracy_frac") == Approx(memcap::theory::grid_recall(16, 8, 0.0)).epsilon(1e-5));
    CHECK(find(rows, "linear:phi=proj,nu=1", "256", "64", "16").at("applies") == "no");

    const Row& cache = find(rows, "softmax:beta=16", "256", "8", "8");
    CHECK(cache.at("applies") == "exact");
    CHECK(num(cache, "model_accuracy_frac") == Approx(memcap::theory::cache_recall(8, 8, 16, 0.0)).epsilon(1e-5));
    CHECK(find(rows, "softmax:beta=16", "256", "16", "16").at("applies") == "no");  // holds 8 of 16 pairs
    // A null slot takes one pair's row: 256 floats at d = 8 hold 15 pairs, not 16.
    const Row& null_full = find(rows, "softmax:beta=16,null=0", "256", "8", "16");
    CHECK(null_full.at("applies") == "no");
    CHECK(null_full.at("note") == "evicting: holds 15 of 16 pairs");
    const Row& null_fits = find(rows, "softmax:beta=16,null=0", "256", "8", "15");
    CHECK(null_fits.at("applies") == "exact");
    CHECK(num(null_fits, "model_accuracy_frac") == Approx(memcap::theory::cache_recall(15, 8, 16, 0.0)).epsilon(1e-5));

    // Capacity: HRR at D = B; n* (continuous) lies between the last n = 4, 8, ... at or above
    // 0.9 and the first below, and the model reads 0.9 there (to the CSV's 6 digits).
    const auto caps = read_rows(dir / "cap.csv");
    int hrr_lines = 0;
    for (const auto& c : caps) {
        if (c.at("memory") != "hrr" || c.at("noise") != "cosine=1") continue;
        ++hrr_lines;
        const std::int64_t b = std::stoll(c.at("budget_floats"));
        std::int64_t expect = 0;
        for (std::int64_t n = 4; n <= b && memcap::theory::hrr_recall(n, b, n) >= 0.9; n *= 2) expect = n;
        REQUIRE(expect > 0);
        const double nstar = num(c, "capacity_nstar");
        CHECK(nstar >= static_cast<double>(expect));
        CHECK(nstar < static_cast<double>(2 * expect));
        CHECK(c.at("nstar_kind") == "crossing");
        CHECK(c.at("d") == std::to_string(b));
        CHECK(num(c, "model_accuracy_frac") == Approx(0.9).margin(1e-5));
        CHECK(memcap::theory::hrr_recall_real(nstar, b, nstar) == Approx(0.9).margin(1e-4));
    }
    CHECK(hrr_lines == (sanitized ? 1 : 4));  // the summary's 64 and 256, then 512 and 1024 (sanitized: 64)
    fs::remove_all(dir);
}

TEST_CASE("theory command: the same bytes on one thread and on three", "[theory][cli][release_only]") {
    // The per-row model calls and the capacity lines' searches run in parallel.
    const fs::path dir = scratch();
    { std::ofstream(dir / "summary.csv") << kSummary; }
    const auto slurp = [](const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    for (const char* threads : {"1", "3"})
        REQUIRE(run_memcap("theory " + (dir / "summary.csv").string() + " --threads " + threads + " --out " +
                           (dir / ("pred" + std::string(threads) + ".csv")).string() + " --capacity " +
                           (dir / ("cap" + std::string(threads) + ".csv")).string() + " --max-budget 4096") == 0);
    CHECK(slurp(dir / "pred1.csv") == slurp(dir / "pred3.csv"));
    CHECK(slurp(dir / "cap1.csv") == slurp(dir / "cap3.csv"));
    CHECK(slurp(dir / "cap1.csv").find("cache_recall") != std::string::npos);  // every kind of line is there
    CHECK(slurp(dir / "cap1.csv").find("grid_recall") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("theory command: several summaries in one call, each one's predictions as alone", "[theory][cli]") {
    // The main job gives the capacity sweep's summary and the modern sweep's together, so the
    // model calls they share are made once: each --out must hold the bytes its summary gives
    // alone, and --capacity the lines of both summaries' budgets and noise settings (here: the
    // lines of the two summaries written as one file).
    const fs::path dir = scratch();
    const std::string text(kSummary);
    std::istringstream all(text);
    std::string header;
    std::getline(all, header);
    std::ofstream a(dir / "a.csv"), b(dir / "b.csv"), both(dir / "both.csv");
    a << header << "\n", b << header << "\n", both << header << "\n";
    int i = 0;
    for (std::string line; std::getline(all, line); ++i) {
        // a: rows at 256 floats without noise; b: the rest and two of a's grid rows (shared model
        // calls), so the budget of 64 floats and the noise setting cosine=0.72 are b's alone
        if (i == 1 || (i >= 3 && i <= 5)) a << line << "\n";
        if (i != 1 && i != 5) b << line << "\n";
        both << line << "\n";
    }
    a.close(), b.close(), both.close();
    const auto slurp = [](const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const auto path = [&](const char* name) { return (dir / name).string(); };
    // Under the sanitizers b's cache rows cost seconds a call: b alone is left out there.
    const bool sanitized = std::getenv("MEMCAP_TEST_SANITIZED") != nullptr;
    REQUIRE(run_memcap("theory " + path("a.csv") + " --out " + path("pa.csv")) == 0);
    if (!sanitized) REQUIRE(run_memcap("theory " + path("b.csv") + " --out " + path("pb.csv")) == 0);
    REQUIRE(run_memcap("theory " + path("a.csv") + " " + path("b.csv") + " --out " + path("pa2.csv") + " --out " +
                       path("pb2.csv")) == 0);
    CHECK(slurp(dir / "pa.csv") == slurp(dir / "pa2.csv"));
    if (!sanitized) CHECK(slurp(dir / "pb.csv") == slurp(dir / "pb2.csv"));
    CHECK(read_rows(dir / "pb2.csv").size() == 8);  // HRR's two rows, a's two grids, the four caches (not the delta rule)
    if (!sanitized) {  // the lines' searches: minutes under the sanitizers
        REQUIRE(run_memcap("theory " + path("a.csv") + " " + path("b.csv") + " --out " + path("pa3.csv") + " --out " +
                           path("pb3.csv") + " --capacity " + path("cap2.csv") + " --max-budget 256") == 0);
        REQUIRE(run_memcap("theory " + path("both.csv") + " --out " + path("pboth.csv") + " --capacity " +
                           path("capboth.csv") + " --max-budget 256") == 0);
        CHECK(slurp(dir / "cap2.csv") == slurp(dir / "capboth.csv"));
        bool b_only = false;  // a line at b's budget and noise setting: the lines are of both summaries
        for (const Row& r : read_rows(dir / "cap2.csv"))
            b_only = b_only || (r.at("budget_floats") == "64" && r.at("noise") == "cosine=0.72");
        CHECK(b_only);
    }
    // one --out per summary, no file named twice, none an input, none empty; nothing written when refused
    const std::string b_before = slurp(dir / "b.csv");
    CHECK(run_memcap("theory " + path("a.csv") + " " + path("b.csv") + " --out " + path("x.csv")) == 2);
    CHECK(run_memcap("theory " + path("a.csv") + " " + path("b.csv")) == 2);
    CHECK(run_memcap("theory " + path("a.csv") + " " + path("b.csv") + " --out " + path("x.csv") + " --out " + path("x.csv")) == 2);
    CHECK(run_memcap("theory " + path("a.csv") + " " + path("b.csv") + " --out " + path("x.csv") + " --out " + path("y.csv") +
                     " --capacity " + path("y.csv")) == 2);
    CHECK(run_memcap("theory " + path("a.csv") + " " + path("missing.csv") + " --out " + path("x.csv") + " --out " +
                     path("y.csv")) == 2);
    CHECK(run_memcap("theory " + path("a.csv") + " " + path("b.csv") + " --out " + path("x.csv") + " --out " + path("b.csv")) == 2);
    CHECK(run_memcap("theory " + path("a.csv") + " " + path("b.csv") + " --out '' --out " + path("x.csv")) == 2);
    CHECK(slurp(dir / "b.csv") == b_before);  // the summary named as an --out is untouched
    CHECK_FALSE(fs::exists(dir / "x.csv"));
    CHECK_FALSE(fs::exists(dir / "y.csv"));
    fs::remove_all(dir);
}

TEST_CASE("theory command: bad input exits 2 and writes nothing", "[theory][cli]") {
    const fs::path dir = scratch();
    const std::string out = (dir / "pred.csv").string();
    CHECK(run_memcap("theory " + (dir / "missing.csv").string() + " --out " + out) == 2);
    { std::ofstream(dir / "foreign.csv") << "a,b,c\n1,2,3\n"; }
    CHECK(run_memcap("theory " + (dir / "foreign.csv").string() + " --out " + out) == 2);
    { std::ofstream(dir / "summary.csv") << kSummary; }
    CHECK(run_memcap("theory " + (dir / "summary.csv").string() + " --max-budget 0 --out " + out) == 2);
    CHECK(run_memcap("theory " + (dir / "summary.csv").string() + " --threads 0 --out " + out) == 2);
    { std::ofstream(dir / "bad.csv") << std::string(kSummary).substr(0, std::string(kSummary).find('\n') + 1)
                                     << "hrr,\"assoc_recall:cosine=2\",native,64,64,64,16,,10,0,320,0.6,0.05,0.5,0.7,0.06,1,d\n"; }
    CHECK(run_memcap("theory " + (dir / "bad.csv").string() + " --out " + out) == 2);
    CHECK_FALSE(fs::exists(out));
    fs::remove_all(dir);
}

TEST_CASE("aggregate keeps a tuned row apart from the same cell at a fixed width", "[aggregate][cli]") {
    // A frontier cell whose chosen width is 64 and the fixed-d frame's cell at d = 64 are the
    // same (memory, task, budget, d, n, seed); `tuned` tells them apart, so neither frame
    // loses the row and neither group doubles its seeds.
    const fs::path dir = scratch();
    const std::string header =
        "memory_spec,task_spec,readout,budget_floats,state_floats,param_floats,d,n,seed,slot,queries,correct,"
        "accuracy_frac,chance_frac,target_dist_mean,tuned,status,message\n";
    const std::string cell = "hrr,\"assoc_recall:queries=32,noise=0,cosine=1,control=none\",native,1024,1024,131072,64,16,";
    {
        std::ofstream f(dir / "results.csv");
        f << header;
        for (const char* tuned : {"d", ""})
            for (int seed = 0; seed < 2; ++seed) f << cell << seed << ",,32,30,0.9375,0.0625,0.5," << tuned << ",ok,\n";
    }
    REQUIRE(run_memcap("aggregate " + (dir / "results.csv").string() + " --out " + (dir / "summary.csv").string()) == 0);
    const auto rows = read_rows(dir / "summary.csv");
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].at("tuned") == "d");
    CHECK(rows[1].at("tuned").empty());
    CHECK(rows[0].at("seeds") == "2");
    CHECK(rows[1].at("seeds") == "2");
    fs::remove_all(dir);
}
