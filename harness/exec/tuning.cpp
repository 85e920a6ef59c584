// memcap/harness/exec/tuning.cpp — see tuning.hpp.
#include "harness/exec/tuning.hpp"

#include "core/error.hpp"
#include "harness/exec/progress.hpp"
#include "memories/registry.hpp"

#include <algorithm>
#include <exception>
#include <iostream>
#include <map>

namespace memcap {

static_assert(kTuningSeedBase > 1000000, "tuning seeds must lie above every scored seed (at most 1,000,000 seeds)");

namespace {

/// The widths a group tries: its list, or the powers of two from 4 up to the budget.
std::vector<int> widths(const CellSpec& c) {
    if (c.d != 0) return {c.d};
    if (!c.d_candidates.empty()) return c.d_candidates;
    std::vector<int> out;
    const std::int64_t top = std::min<std::int64_t>(c.budget_floats.value_or(4), std::int64_t{1} << 30);
    for (std::int64_t d = 4; d <= top; d *= 2) out.push_back(static_cast<int>(d));
    return out;
}

/// Memory specs for every combination of the candidates of its `best` parameters, in order.
std::vector<Spec> memory_choices(const Spec& memory) {
    std::vector<RawSpec> raws{RawSpec{memory.name(), {}}};
    const auto best = memory.best_keys();
    for (const auto& p : find_memory(memory.name()).params) {
        const bool tuned = std::find(best.begin(), best.end(), p.key) != best.end();
        if (!tuned && !memory.has(p.key)) continue;  // an optional parameter left out
        std::vector<RawSpec> next;
        for (const auto& raw : raws)
            for (const auto& value : tuned ? p.best : std::vector<std::string>{memory.text(p.key)}) {
                RawSpec r = raw;
                r.pairs.emplace_back(p.key, value);
                next.push_back(std::move(r));
            }
        raws = std::move(next);
    }
    std::vector<Spec> out;
    for (const auto& raw : raws) out.push_back(bind_spec(find_memory(memory.name()).schema(), raw));
    return out;
}

std::string tuned_label(const CellSpec& c) {
    std::string out = c.d == 0 ? "d" : "";
    for (const auto& k : c.memory.best_keys()) out += (out.empty() ? "" : ",") + k;
    return out;
}

/// Mean accuracy of one tuning cell (the mean over slots on tasks with slots; tasks with
/// absent queries: the balanced accuracy of answering or abstaining); −1 when it failed.
double accuracy(const CellResult& r) {
    if (r.ok && r.abstention) return r.abstention->balanced;
    if (!r.ok || r.slots.empty()) return -1.0;
    double sum = 0;
    for (const auto& s : r.slots) sum += static_cast<double>(s.correct) / static_cast<double>(s.queries);
    return sum / static_cast<double>(r.slots.size());
}

}  // namespace

std::vector<CellSpec> tuning_candidates(const CellSpec& cell) {
    if (cell.d == 0 && !cell.budget_floats)
        throw UsageError("d=best chooses the width at a budget: give --budget (or budgets = in the config); "
                         "at the natural size the state grows with d");
    std::vector<CellSpec> out;
    const bool listed = cell.d != 0 || !cell.d_candidates.empty();
    for (const int d : widths(cell))
        for (const auto& memory : memory_choices(cell.memory)) {
            CellSpec c = cell;
            c.d = d, c.memory = memory, c.seed = 0;
            c.d_candidates.clear();
            c.tuning_seeds = 0;
            c.tuned.clear();
            if (listed && cell.memory.best_keys().empty()) {
                check_cell(c);  // a width the user listed must run here: UsageError otherwise
            } else {
                // Default widths (and settings) the memory cannot take are skipped, by rules that
                // do not depend on the machine, so the choice is the same everywhere (and on every
                // MPI rank): the cell must be posable and fit kTuningMaxCellBytes.
                try {
                    if (check_cell_structure(c) > kTuningMaxCellBytes) continue;
                } catch (const UsageError&) {
                    continue;
                }
            }
            out.push_back(std::move(c));
        }
    if (out.empty())
        throw UsageError("cell (" + group_label(cell) + "): no candidate width or setting can run at this budget");
    return out;
}

void check_candidates(const CellSpec& cell) { tuning_candidates(cell); }

namespace {

struct Job {
    std::size_t group, candidate;
    CellSpec cell;
};

/// Runs this process's share of the jobs on `threads` threads (any order; each writes its
/// own score), combines the shares, and returns each job's tuning accuracy, in job order.
std::vector<double> run_jobs(const std::vector<Job>& jobs, int threads, bool progress, const std::string& label,
                             const TuningShare& share) {
    std::vector<std::size_t> mine;
    for (std::size_t j = static_cast<std::size_t>(share.rank); j < jobs.size(); j += static_cast<std::size_t>(share.size))
        mine.push_back(j);
    std::vector<double> score(jobs.size(), 0.0), work(progress ? jobs.size() : 0);
    double all_work = 0;
    for (const std::size_t j : mine)
        if (progress) all_work += work[j] = cell_work(jobs[j].cell);
    std::exception_ptr failure;
    Progress bar(static_cast<std::int64_t>(mine.size()), label, progress, all_work);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(mine.size()); ++i) {
        const std::size_t j = mine[static_cast<std::size_t>(i)];
        try {
            score[j] = accuracy(run_cell(jobs[j].cell));
        } catch (...) {
#pragma omp critical(memcap_tuning_failure)
            if (!failure) failure = std::current_exception();
        }
        bar.tick(1, work.empty() ? 1.0 : work[j]);
    }
    bar.finish();
    if (share.size > 1) {
        if (share.agree(failure ? 1 : 0) != 0) {
            if (failure) std::rethrow_exception(failure);
            throw UsageError("a tuning cell failed on another MPI rank");
        }
        share.combine(score);
    }
    if (failure) std::rethrow_exception(failure);
    return score;
}

}  // namespace

void resolve_tuning(std::vector<CellSpec>& cells, int threads, bool progress, std::uint64_t tuning_seed_offset,
                    const TuningShare& share) {
    // Groups in order of first appearance, each with its candidates.
    std::map<std::string, std::size_t> group_of;
    std::vector<std::vector<CellSpec>> candidates;
    std::vector<int> seeds;
    for (const auto& c : cells)
        if (c.needs_tuning() && group_of.emplace(group_label(c), candidates.size()).second) {
            candidates.push_back(tuning_candidates(c));
            seeds.push_back(c.tuning_seeds);
        }
    if (candidates.empty()) return;
    const auto job = [&](std::size_t g, std::size_t k, int s) {
        CellSpec c = candidates[g][k];
        c.seed = kTuningSeedBase + tuning_seed_offset + static_cast<std::uint64_t>(s);
        return Job{g, k, std::move(c)};
    };
    // total[g][k]: the sum of candidate k's accuracies over the tuning seeds it ran, summed
    // in job order (fixed) so the choice is the same at any thread count.
    std::vector<std::vector<double>> total(candidates.size());
    for (std::size_t g = 0; g < candidates.size(); ++g) total[g].assign(candidates[g].size(), 0.0);
    const auto add = [&](const std::vector<Job>& jobs, const std::vector<double>& score) {
        for (std::size_t j = 0; j < jobs.size(); ++j) total[jobs[j].group][jobs[j].candidate] += score[j];
    };
    // Ranks candidates by total, higher first; ties keep candidate order (smaller width first).
    const auto ranked = [&](std::size_t g, const std::vector<std::size_t>& among) {
        std::vector<std::size_t> order = among;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return total[g][a] > total[g][b]; });
        return order;
    };

    // Round 1: every candidate on the first tuning seed.
    std::vector<Job> first;
    for (std::size_t g = 0; g < candidates.size(); ++g)
        for (std::size_t k = 0; k < candidates[g].size(); ++k) first.push_back(job(g, k, 0));
    if (progress)
        std::cerr << "memcap: choosing widths and settings for " << candidates.size() << " group"
                  << (candidates.size() == 1 ? "" : "s") << " on tuning seeds: every candidate on the first ("
                  << first.size() << " cells), then the best " << kTuningFinalists << " of each on the others\n";
    add(first, run_jobs(first, threads, progress, "tuning", share));

    // Round 2: the kTuningFinalists best go on to the other tuning seeds.
    std::vector<std::vector<std::size_t>> finalists(candidates.size());
    std::vector<Job> rest;
    for (std::size_t g = 0; g < candidates.size(); ++g) {
        std::vector<std::size_t> all(candidates[g].size());
        for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
        auto order = ranked(g, all);
        if (order.size() > kTuningFinalists) order.resize(kTuningFinalists);
        std::sort(order.begin(), order.end());  // back to candidate order, for ties
        finalists[g] = order;
        for (const std::size_t k : finalists[g])
            for (int s = 1; s < seeds[g]; ++s) rest.push_back(job(g, k, s));
    }
    if (!rest.empty()) add(rest, run_jobs(rest, threads, progress, "tuning (finalists)", share));

    std::vector<std::size_t> winner(candidates.size());
    for (std::size_t g = 0; g < candidates.size(); ++g) winner[g] = ranked(g, finalists[g]).front();
    for (auto& c : cells) {
        if (!c.needs_tuning()) continue;
        const std::size_t g = group_of.at(group_label(c));
        const CellSpec& chosen = candidates[g][winner[g]];
        c.tuned = tuned_label(c);
        c.d = chosen.d;
        c.memory = chosen.memory;
        c.d_candidates.clear();
        c.tuning_seeds = 0;
    }
}

}  // namespace memcap
