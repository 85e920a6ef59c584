// Chained lookups (chain_recall), deciding that nothing fits (assoc_recall:absent) and the
// cache's null slot (softmax:null).
#include "support.hpp"

#include "core/error.hpp"
#include "core/rng.hpp"
#include "harness/eval/abstention.hpp"
#include "harness/exec/tuning.hpp"
#include "memories/softmax/softmax_cache.hpp"
#include "memories/theory.hpp"
#include "harness/results/aggregate.hpp"
#include "harness/results/csv.hpp"
#include "harness/results/theory_table.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace memcap;
using namespace memcap::test;

namespace {

CellSpec chain_cell(const std::string& memory, const std::string& task, std::int64_t n, int d,
                    std::optional<std::int64_t> budget, std::uint64_t seed, const std::string& readout = "auto") {
    return make_cell(parse_memory_spec(memory), parse_task_spec(task), parse_readout_spec(readout), budget, d, n, seed);
}

}  // namespace

TEST_CASE("chain with cleanup: the per-hop curve follows p1^h within sampling error (linear grid)", "[chain]") {
    // The 64 × 64 grid at n = 256 items reads about 76% of one-hop lookups right, so four
    // hops fall to about a third: a curve with room to be wrong.
    const int hops = 4, seeds = 30;
    const auto slots = measure_slots(Run{"linear", "chain_recall:hops=4,cleanup=nearest,queries=256", 256, seeds});
    REQUIRE(slots.size() == static_cast<std::size_t>(hops));
    const Measured& one = slots.at(1);
    REQUIRE(one.mean > 0.6);
    REQUIRE(one.mean < 0.9);
    for (int h = 2; h <= hops; ++h) {
        const double model = theory::chain_cleanup_accuracy(one.mean, 256, h);
        // The model's own error from estimating p1 (its derivative times p1's standard error),
        // added in quadrature to the measured hop's: 3 standard errors of the difference.
        const double slope = (theory::chain_cleanup_accuracy(one.mean + 1e-4, 256, h) -
                              theory::chain_cleanup_accuracy(one.mean - 1e-4, 256, h)) / 2e-4;
        const double tol = 3.0 * std::hypot(slots.at(h).se(), slope * one.se());
        INFO("hop " << h << ": measured " << slots.at(h).mean << ", model " << model << " (p1^h = "
                    << std::pow(one.mean, h) << "), tolerance " << tol);
        REQUIRE(std::abs(slots.at(h).mean - model) <= tol);
        REQUIRE(slots.at(h).mean < slots.at(h - 1).mean);  // errors compound
    }
}

TEST_CASE("chain: the two modes ask the same first hop, and an exact memory chains without loss", "[chain]") {
    for (const std::string memory : {"linear", "hrr", "softmax"}) {
        CAPTURE(memory);
        const auto clean = measure_slots(Run{memory, "chain_recall:hops=3,cleanup=nearest", 128, 5, 1024, 32});
        const auto raw = measure_slots(Run{memory, "chain_recall:hops=3,cleanup=none", 128, 5, 1024, 32});
        REQUIRE(clean.at(1).mean == raw.at(1).mean);  // the same queries, the same reads
    }
    // The unbounded cache at d = 64 reads every stored item exactly enough to chain 8 hops.
    for (const std::string mode : {"nearest", "none"}) {
        const auto slots = measure_slots(Run{"softmax", "chain_recall:hops=8,cleanup=" + mode, 64, 3});
        for (const auto& [hop, m] : slots) REQUIRE(m.mean == 1.0);
    }
    // Chance: uniform attention reads the mean of the items, whatever the query.
    const auto uniform = measure_slots(Run{"softmax:beta=0", "chain_recall:hops=2,cleanup=nearest,queries=64", 32, 40});
    for (const auto& [hop, m] : uniform) require_matches_exact(m, 1.0 / 32);
}

TEST_CASE("chain_recall refuses what it cannot pose", "[chain][bad_input]") {
    REQUIRE_THROWS_WITH(check_cell(chain_cell("linear", "chain_recall:hops=8", 8, 16, std::nullopt, 0)),
                        Catch::Contains("hops=8 is too large for n=8"));
    REQUIRE_THROWS_AS(check_cell(chain_cell("linear", "chain_recall:hops=1", 1, 16, std::nullopt, 0)), UsageError);
    REQUIRE_THROWS_AS(parse_task_spec("chain_recall:hops=0"), UsageError);
    REQUIRE_THROWS_AS(parse_task_spec("chain_recall:cleanup=item"), UsageError);
    REQUIRE_THROWS_WITH(check_cell(chain_cell("linear", "chain_recall", 64, 16, std::nullopt, 0, "probe")),
                        Catch::Contains("needs the memory's own read"));
    // The rotation RNN has no read of its own (auto gives it the probe): refused, saying why.
    REQUIRE_THROWS_WITH(check_cell(chain_cell("rotation", "chain_recall", 64, 16, std::nullopt, 0)),
                        Catch::Contains("has no meaningful read of its own"));
}

TEST_CASE("abstention: the threshold and the AUC on a worked example", "[abstain]") {
    using D = Decision;
    // Absent 0.1, 0.2, 0.6; present 0.5 (wrong), 0.7, 0.9 (right).
    const std::vector<Decision> d = {{0.9f, D::PresentRight}, {0.1f, D::Absent}, {0.5f, D::PresentWrong},
                                     {0.7f, D::PresentRight}, {0.2f, D::Absent}, {0.6f, D::Absent}};
    // Accepting from 0.65 up: 2/3 of present answered right, 3/3 absent rejected -> 5/6, the best.
    REQUIRE(choose_threshold(d) == Approx(0.65));
    const Abstention a = score_abstention(d, 0.65);
    REQUIRE(a.balanced == Approx(5.0 / 6.0));
    REQUIRE(a.false_accept == 0.0);
    REQUIRE(a.present_accept == Approx(2.0 / 3.0));
    // Pairs (present, absent) ordered right: 0.9 and 0.7 beat all three, 0.5 beats two: 8/9.
    REQUIRE(a.auc == Approx(8.0 / 9.0));
    REQUIRE(roc_auc({{0.3f, D::PresentRight}, {0.3f, D::Absent}}) == Approx(0.5));  // a tie counts 1/2
}

TEST_CASE("abstention: the threshold is chosen on tuning seeds, and scored seeds do not move it", "[abstain]") {
    STATIC_REQUIRE(kThresholdSeedBase == kTuningSeedBase);
    // A cache of 32 pairs holding the last 32 of 64: half the present queries are gone.
    const std::string task = "assoc_recall:absent=0.5";
    std::vector<double> thresholds, false_accepts;
    for (std::uint64_t seed : {0u, 1u, 7u, 123u}) {
        const CellResult r = run_cell(chain_cell("softmax", task, 64, 16, 1024, seed));
        REQUIRE(r.ok);
        REQUIRE(r.abstention);
        REQUIRE(r.abstention->absent == 16);
        REQUIRE(r.abstention->present == 16);
        thresholds.push_back(r.abstention->threshold);
        false_accepts.push_back(r.abstention->false_accept);
    }
    for (double t : thresholds) REQUIRE(t == thresholds.front());
    // It is the threshold of the tuning seeds' decisions, computed here by hand.
    std::vector<Decision> tuning;
    for (int s = 0; s < kThresholdSeeds; ++s) {
        const CellSpec c = chain_cell("softmax", task, 64, 16, 1024, kThresholdSeedBase + static_cast<std::uint64_t>(s));
        const auto t = make_task(c.task);
        auto m = build_memory(c, *t);
        const CellOutcome o = native_readout(*m, *t, TaskCell{c.n, c.d, c.seed});
        tuning.insert(tuning.end(), o.decisions.begin(), o.decisions.end());
    }
    REQUIRE(thresholds.front() == choose_threshold(tuning));
}

TEST_CASE("assoc_recall:absent refuses what it cannot combine with", "[abstain][bad_input]") {
    REQUIRE_THROWS_AS(parse_task_spec("assoc_recall:absent=1"), UsageError);
    REQUIRE_THROWS_AS(parse_task_spec("assoc_recall:absent=-0.1"), UsageError);
    REQUIRE_THROWS_WITH(check_cell(chain_cell("softmax", "assoc_recall:absent=0.5,control=key_shuffle", 16, 16, std::nullopt, 0)),
                        Catch::Contains("cannot be combined with control=key_shuffle"));
    REQUIRE_THROWS_WITH(check_cell(chain_cell("softmax", "assoc_recall:absent=0.01", 16, 16, std::nullopt, 0)),
                        Catch::Contains("at least one absent and one present"));
    REQUIRE_THROWS_WITH(check_cell(chain_cell("rotation", "assoc_recall:absent=0.5", 16, 16, std::nullopt, 0)),
                        Catch::Contains("needs the memory's own read"));
    // Left out, absent is not in the canonical spec; given, it is.
    REQUIRE(parse_task_spec("assoc_recall").canonical().find("absent") == std::string::npos);
    REQUIRE(parse_task_spec("assoc_recall:absent=0.5").canonical().find("absent=0.5") != std::string::npos);
    REQUIRE_THROWS_WITH(check_cell(chain_cell("linear", "assoc_recall:absent=0.5,vocab=64,keys=learned", 16, 16, std::nullopt, 0)),
                        Catch::Contains("cannot be combined with keys=learned"));
}

TEST_CASE("softmax null slot: counted in the state, absorbs weight when nothing matches", "[null]") {
    const int d = 16;
    Rng rng = Rng::stream("test/null_slot");
    const RowMat keys = rng.unit_rows<RowMat>(8, d), values = rng.unit_rows<RowMat>(8, d);
    const RowMat fresh = rng.unit_rows<RowMat>(4, d);
    SoftmaxCache plain(MemoryShape{d, d, 1024}, 16.0), low(MemoryShape{d, d, 1024}, 16.0, -80.0),
        high(MemoryShape{d, d, 1024}, 16.0, 12.0);
    for (SoftmaxCache* m : {&plain, &low, &high}) m->write_batch(keys, values);
    REQUIRE(low.state_floats() == plain.state_floats() + 2 * d);  // the slot takes one pair's row
    REQUIRE(low.state()(0) == -80.0f);
    low.reset();  // the slot stays: reset equals a fresh cache
    REQUIRE(low.state_floats() == 2 * d);
    REQUIRE(low.state()(0) == -80.0f);
    low.write_batch(keys, values);
    REQUIRE(memory_size(parse_memory_spec("softmax:null=3"), MemoryShape{d, d, 1024}).state_floats == 1024);
    REQUIRE(memory_size(parse_memory_spec("softmax:null=3"), MemoryShape{d, d, 1024}).dims.at(0).second == 31);
    RowMat a(8, d), b(8, d), c(4, d), e(4, d);
    plain.read_batch(keys, a);
    low.read_batch(keys, b);
    REQUIRE((a - b).cwiseAbs().maxCoeff() < 1e-6f);  // a logit of −80 takes no weight
    // A stored key matches with logit 16 > 12: its read keeps most of its length; a fresh
    // code (logits about 16 · N(0, 1/16)) loses most of it.
    high.read_batch(keys, b);
    plain.read_batch(fresh, c);
    high.read_batch(fresh, e);
    for (int i = 0; i < 8; ++i) REQUIRE(b.row(i).norm() > 0.9f);
    REQUIRE(e.rowwise().norm().maxCoeff() < 0.6f * c.rowwise().norm().minCoeff());
    REQUIRE(high.weights(fresh.row(0).transpose()).sum() < 0.6f);
    REQUIRE_THROWS_AS(parse_memory_spec("softmax:null=inf"), UsageError);
    REQUIRE_THROWS_AS(parse_memory_spec("softmax:null=nan"), UsageError);
    REQUIRE(parse_memory_spec("softmax").canonical() == "softmax:beta=16");
    REQUIRE(parse_memory_spec("softmax:null=4").canonical() == "softmax:beta=16,null=4");
}

TEST_CASE("aggregate carries the abstention columns: mean and interval over seeds", "[abstain][aggregate]") {
    const std::string task = "assoc_recall:absent=0.5";
    const auto path = std::filesystem::temp_directory_path() / "memcap_test_abstention.csv";
    std::vector<double> auc, fa, bal;
    {
        std::ofstream f(path);
        f << cell_header();
        for (std::uint64_t seed = 0; seed < 6; ++seed) {
            const CellResult r = run_cell(chain_cell("linear", task, 64, 32, 1024, seed));
            REQUIRE(r.abstention);
            auc.push_back(std::stod(format_sig(r.abstention->auc)));
            fa.push_back(std::stod(format_sig(r.abstention->false_accept)));
            bal.push_back(std::stod(format_sig(r.abstention->balanced)));
            f << cell_rows(r);
        }
    }
    const auto groups = summarise_csv(path.string());
    std::filesystem::remove(path);
    REQUIRE(groups.size() == 1);
    const GroupSummary& g = groups.front();
    const Summary sa = summarise(auc, SummaryOptions{0.0, true}), sf = summarise(fa, SummaryOptions{0.0, true}),
                  sb = summarise(bal, SummaryOptions{0.0, true});
    REQUIRE(g.auc.count == 6);
    REQUIRE(g.auc.mean == Approx(sa.mean));
    REQUIRE(g.auc.lo == Approx(sa.lo));
    REQUIRE(g.auc.hi == Approx(sa.hi));
    REQUIRE(g.false_accept.mean == Approx(sf.mean));
    REQUIRE(g.balanced.mean == Approx(sb.mean));
    REQUIRE(g.balanced.hi == Approx(sb.hi));
    // The grid at n = 64 in 1024 floats recalls most present keys: it tells absent ones apart.
    REQUIRE(g.auc.lo > 0.5);
    const std::string csv = summary_csv(groups);
    REQUIRE(csv.find(format_sig(sa.mean)) != std::string::npos);
}

TEST_CASE("memcap theory predicts chains with cleanup: the one-hop model compounded over the hop", "[chain][theory]") {
    const auto path = std::filesystem::temp_directory_path() / "memcap_test_chain_summary.csv";
    {
        std::ofstream f(path);
        f << header_line(summary_columns());
        CsvRecord r(summary_columns());
        r.set("memory_spec", "linear:phi=proj,nu=1").set("readout", "native").set("state_floats", "4096").set("d", "64")
            .set("n", "256").set("seeds", "10").set("errors", "0").set("queries", "320").set("accuracy_mean_frac", "0.4")
            .set("accuracy_sd_frac", "0.05").set("accuracy_se_frac", "0.0158").set("chance_frac", "0.00390625");
        for (const char* mode : {"nearest", "none"})
            f << CsvRecord(r).set("task_spec", std::string("chain_recall:hops=3,cleanup=") + mode + ",queries=32").set("slot", "3").line();
    }
    const TheoryTables t = theory_tables(TheoryOptions{{path.string()}});
    std::filesystem::remove(path);
    const auto lines = [&] {
        std::vector<std::vector<std::string>> out;
        std::istringstream in(t.predictions_csv.front());
        for (std::string line; std::getline(in, line);) out.push_back(split_csv_line(line));
        return out;
    }();
    REQUIRE(lines.size() == 2);  // the header and the row with cleanup; without cleanup is not modelled
    const CsvColumns col(t.predictions_csv.front().substr(0, t.predictions_csv.front().find('\n')), {}, "predictions");
    REQUIRE(lines[1][col["slot"]] == "3");
    REQUIRE(lines[1][col["applies"]] == "exact");
    const double expected = theory::chain_cleanup_accuracy(theory::grid_recall(256, 64), 256, 3);
    REQUIRE(std::stod(lines[1][col["model_accuracy_frac"]]) == Approx(expected).epsilon(1e-5));
    REQUIRE(expected == Approx(std::pow(theory::grid_recall(256, 64), 3)).margin(3.0 * (1 - theory::grid_recall(256, 64)) / 255));
}
