// The race against an exhaustive race (harness/exec/tuning.hpp): on small cells — several
// memories and settings, associative recall with and without query noise, two budgets, n on
// both sides of capacity — every candidate runs on every tuning seed up to the cap
// (kTuningSeedCap × tuning_seeds), with no early stop and no pruning along n. The race as a
// sweep runs it (resolve_tuning, its ladder, its early stops) is then fed those same scores
// through its journal, so it sees exactly the tuning cells it would compute, and its winner is
// judged on the exhaustive data: it must read within kTuningSeparation standard errors (of the
// difference) of the exhaustive best, or be about as likely to reach the capacity threshold as
// the likeliest candidate (pass_chance within kPassChanceSlack), as the winner rule asks.
// Every disagreement with the exhaustive best is printed; none may break both.
#include "harness/eval/cell.hpp"
#include "harness/exec/grid.hpp"
#include "harness/exec/tuning.hpp"
#include "harness/eval/readout.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace memcap;

namespace {

/// One tuning cell's score as the race takes it (tuning.cpp): the mean over slots of the
/// fraction of correct reads, and the reads; reads −1 when the cell failed.
std::pair<double, double> score(const CellResult& r) {
    if (!r.ok || r.slots.empty()) return {0.0, -1.0};
    double sum = 0, reads = 0;
    for (const auto& s : r.slots) {
        sum += static_cast<double>(s.correct) / static_cast<double>(s.queries);
        reads += static_cast<double>(s.queries);
    }
    return {sum / static_cast<double>(r.slots.size()), reads};
}

GridBlock block(const std::string& memory, const std::string& task, std::int64_t budget, std::vector<std::int64_t> ns) {
    GridBlock g;
    g.memories = {parse_memory_spec(memory)};
    g.tasks = {parse_task_spec(task)};
    g.budgets = {budget};
    g.ns = std::move(ns);
    g.seeds = 1;
    g.tuning_seeds = 3;  // the frontier blocks' (scripts/sweeps/capacity.ini)
    g.set_widths("best", "d");
    g.readouts = {parse_readout_spec("native")};
    return g;
}

std::string choice(const Race& race, std::size_t k) {
    return "d=" + std::to_string(race.candidate(k).d) + " " + race.candidate(k).memory.canonical();
}

}  // namespace

TEST_CASE("the race's winners hold up against an exhaustive race on small cells", "[tuning][race][release_only]") {
    const auto started = std::chrono::steady_clock::now();
    std::vector<CellSpec> cells;
    // Budgets 256 and 1024; n from well below each memory's capacity there to well past it.
    const std::vector<std::string> memories = {"softmax:beta=best", "delta:beta=best", "linear", "selective:rho=best",
                                               "gla:alpha=best"};
    for (const auto& memory : memories)
        for (const std::string task : {"assoc_recall", "assoc_recall:cosine=0.72"}) {
            for (const auto& c : block(memory, task, 256, {4, 8, 16, 32, 64, 128}).cells()) cells.push_back(c);
            for (const auto& c : block(memory, task, 1024, {8, 16, 32, 64, 128, 256}).cells()) cells.push_back(c);
        }
    Races races;
    ResolvedCells resolved = check_cells(cells, &races);
    REQUIRE(races.size() == cells.size());  // one seed: one group a cell

    // (ii) Exhaustive: every candidate of every group on every tuning seed up to the cap.
    struct Job {
        std::size_t g, k;
        int s;
    };
    std::vector<Job> jobs;
    for (std::size_t g = 0; g < races.size(); ++g)
        for (std::size_t k = 0; k < races[g].size(); ++k)
            for (int s = 0; s < races[g].levels().back(); ++s) jobs.push_back({g, k, s});
    std::vector<std::pair<double, double>> scores(jobs.size());
#pragma omp parallel for schedule(dynamic, 8) num_threads(2)
    for (std::int64_t j = 0; j < static_cast<std::int64_t>(jobs.size()); ++j) {
        const Job& job = jobs[static_cast<std::size_t>(j)];
        CellSpec c = races[job.g].candidate(job.k);
        c.seed = kTuningSeedBase + static_cast<std::uint64_t>(job.s);
        scores[static_cast<std::size_t>(j)] = score(run_cell(*races[job.g].resolution(job.k), c));
    }
    Races exhaustive = races;  // the same candidates, never narrowed
    std::map<std::size_t, std::pair<double, double>> by_index;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const Job& job = jobs[j];
        by_index[races.index(job.g, job.k, job.s)] = scores[j];
        if (job.k == 0 && job.s == 0) exhaustive[job.g].start(nullptr);
        exhaustive[job.g].add(job.k, scores[j].first, scores[j].second);
    }

    // (i) The race as a sweep runs it, its tuning cells read from a journal holding the
    // exhaustive scores: the same cells, the same scores, the same choices as computing them.
    std::size_t asked = 0, missing = 0;
    TuningJournal journal;
    journal.find = [&](std::size_t index, double& accuracy, double& reads) {
        ++asked;
        const auto it = by_index.find(index);
        if (it == by_index.end()) return false;
        accuracy = it->second.first, reads = it->second.second;
        return true;
    };
    journal.keep = [&](std::size_t, double, double) { ++missing; };
    std::vector<CellSpec> tuned = cells;
    resolve_tuning(tuned, races, resolved, 2, false, 0, {}, journal);
    REQUIRE(missing == 0);  // every tuning cell the race asked for was among the exhaustive ones
    REQUIRE(asked > 0);
    {  // and the race computing its own tuning cells makes the same choices
        std::vector<CellSpec> own = cells;
        Races again;
        ResolvedCells again_resolved = check_cells(own, &again);
        resolve_tuning(own, again, again_resolved, 2, false);
        for (std::size_t i = 0; i < cells.size(); ++i) REQUIRE(own[i].tuned == tuned[i].tuned);
    }

    std::size_t compared = 0, agree = 0, within = 0, as_likely = 0, clearly_worse = 0, raced_cells = 0,
                past_capacity = 0;
    for (std::size_t g = 0; g < races.size(); ++g) {
        const Race& race = races[g];
        const Race& all = exhaustive[g];
        for (std::size_t k = 0; k < race.size(); ++k) raced_cells += static_cast<std::size_t>(race.seeds(k));
        if (race.size() < 2) continue;
        ++compared;
        const std::size_t w = race.winner();
        // The exhaustive best: the highest mean over every tuning seed (earlier on ties) of the
        // candidates whose cells ran; and the likeliest to reach the capacity threshold.
        std::size_t best = race.size();
        double likeliest = 0;
        for (std::size_t k = 0; k < all.size(); ++k) {
            if (all.seeds(k) < all.levels().back()) continue;  // a cell of it failed
            if (best == race.size() || all.mean(k) > all.mean(best)) best = k;
            likeliest = std::max(likeliest, pass_chance(all.mean(k), all.se(k)));
        }
        REQUIRE(best < race.size());
        if (w == best) {
            ++agree;
            continue;
        }
        const double gap = all.mean(best) - all.mean(w);
        const double se = std::sqrt(all.se(best) * all.se(best) + all.se(w) * all.se(w));
        const bool close = all.seeds(w) == all.levels().back() && gap <= kTuningSeparation * se;
        const bool likely = all.seeds(w) == all.levels().back() &&
                            pass_chance(all.mean(w), all.se(w)) >= likeliest - kPassChanceSlack;
        within += close, as_likely += likely && !close;
        past_capacity += !close && likely && likeliest < kSettledPassChance;  // every candidate surely fails
        clearly_worse += !close && !likely;
        char line[512];
        std::snprintf(line, sizeof line,
                      "%s: race chose %s (exhaustive %.4f +- %.4f, pass %.3f; race %.4f on %d seeds), exhaustive best %s "
                      "(%.4f +- %.4f, pass %.3f): %.2f SE%s\n",
                      group_label(races.asked(g)).c_str(), choice(race, w).c_str(), all.mean(w), all.se(w),
                      pass_chance(all.mean(w), all.se(w)), race.mean(w), race.seeds(w), choice(race, best).c_str(),
                      all.mean(best), all.se(best), pass_chance(all.mean(best), all.se(best)), se > 0 ? gap / se : 0.0,
                      close ? "" : likely ? " (as likely to pass)" : "  CLEARLY WORSE");
        std::cout << "race vs exhaustive: " << line;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::cout << "race vs exhaustive: " << compared << " groups compared, " << agree << " the same choice, " << within
              << " within " << kTuningSeparation << " SE, " << as_likely << " as likely to pass (" << past_capacity
              << " of them past capacity: every candidate surely fails), " << clearly_worse
              << " clearly worse; the race ran " << raced_cells << " of " << jobs.size() << " tuning cells; " << seconds
              << " s\n";
    REQUIRE(compared >= 50);
    REQUIRE(agree + within + as_likely == compared);
    REQUIRE(clearly_worse == 0);
}
