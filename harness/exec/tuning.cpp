// memcap/harness/exec/tuning.cpp — see tuning.hpp.
#include "harness/exec/tuning.hpp"

#include "memories/precision.hpp"

#include "core/error.hpp"
#include "core/spin_lock.hpp"
#include "harness/exec/memory_gate.hpp"
#include "harness/exec/progress.hpp"
#include "harness/exec/runner.hpp"
#include "harness/results/csv.hpp"
#include "harness/results/stats.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <algorithm>
#include <set>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>

namespace memcap {

static_assert(kTuningSeedBase > 1000000, "tuning seeds must lie above every scored seed (at most 1,000,000 seeds)");

namespace {

/// The widths a group tries: its list, or the powers of two from kNarrowestWidth up to the budget.
std::vector<int> widths(const CellSpec& c) {
    if (c.d != 0) return {c.d};
    if (!c.d_candidates.empty()) return c.d_candidates;
    std::vector<int> out;
    const std::int64_t top = std::min<std::int64_t>(c.budget_floats.value_or(kNarrowestWidth), std::int64_t{1} << 30);
    for (std::int64_t d = kNarrowestWidth; d <= top; d *= 2) out.push_back(static_cast<int>(d));
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
            for (const auto& value : tuned ? memory.candidates(p.key, p) : std::vector<std::string>{memory.text(p.key)}) {
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

/// A run of at most this many tuned groups prints each group's choice and the shape it buys.
constexpr std::size_t kPrintedChoices = 24;

/// The settings the race chose for `c` (a cell that needs tuning) when `chosen` won:
/// "d=64,beta=8" (the width when d was best, then each memory key given as best).
std::string tuned_label(const CellSpec& c, const CellSpec& chosen) {
    std::string out = c.d == 0 ? "d=" + std::to_string(chosen.d) : "";
    for (const auto& k : c.memory.best_keys()) {
        // An optional key chosen at the value that binds as left out (precision=fp32) has no text.
        std::string value = "none";
        if (chosen.memory.has(k)) value = chosen.memory.text(k);
        else
            for (const auto& p : find_memory(chosen.memory.name()).params)
                if (p.key == k && !p.same_as_none.empty()) value = p.same_as_none;
        out += (out.empty() ? "" : ",") + k + "=" + value;
    }
    return out;
}

}  // namespace

namespace {

/// A candidate cell and its resolution (looked up once, for its cost, its work and its runs).
struct Candidate {
    CellSpec cell;
    std::shared_ptr<const ResolvedCell> resolved;
};

std::vector<Candidate> resolved_candidates(const CellSpec& cell) {
    if (cell.d == 0 && !cell.budget_floats)
        throw UsageError("d=best chooses the width at a budget: give --budget (or budgets = in the config); "
                         "at the natural size the state grows with d");
    const auto best = cell.memory.best_keys();
    if (!cell.budget_floats && std::find(best.begin(), best.end(), kPrecisionKey) != best.end())
        throw UsageError("memory '" + cell.memory.canonical() + "': precision=best chooses the precision at a budget " +
                         "(its bits buy more numbers at a lower precision): give --budget or --budget-bits");
    std::vector<Candidate> out;
    std::string first_refusal;  // why the first candidate that could not run could not
    const bool listed = cell.d != 0 || !cell.d_candidates.empty();
    for (const int d : widths(cell))
        for (const auto& memory : memory_choices(cell.memory)) {
            CellSpec c = cell;
            c.d = d, c.memory = memory, c.seed = 0;
            c.d_candidates.clear();
            c.tuning_seeds = 0;
            c.tuned.clear();
            std::shared_ptr<const ResolvedCell> r;
            if (listed && cell.memory.best_keys().empty()) {
                r = resolve_cell(c);  // a width the user listed must run here: UsageError otherwise
                check_fits(*r);
            } else {
                // Default widths (and settings) the memory cannot take are skipped, by rules that
                // do not depend on the machine, so the choice is the same everywhere (and on every
                // MPI rank): the cell must be posable and fit kTuningMaxCellBytes.
                try {
                    r = resolve_cell(c);
                } catch (const UsageError& e) {
                    if (first_refusal.empty()) first_refusal = e.what();
                    continue;
                }
                if (r->peak_bytes > kTuningMaxCellBytes) continue;
            }
            out.push_back(Candidate{std::move(c), std::move(r)});
        }
    if (out.empty())
        throw UsageError("cell (" + group_label(cell) + "): no candidate width or setting can run at this budget" +
                         (first_refusal.empty() ? std::string() : " (the first: " + first_refusal + ")"));
    return out;
}

}  // namespace

double candidate_cost(const ResolvedCell& r) {
    const CellSpec& c = r.cell;
    const MemoryEntry& entry = *r.memory;
    if (!entry.cost) return cell_work(r, c.seed);
    const Task& task = *r.task;
    const TaskCell tc = r.at(c.seed);
    const MemoryShape& shape = r.shape;
    const MemorySize& size = r.size;
    const std::int64_t writes = task.writes_per_episode(tc);
    const double per_episode = entry.cost(c.memory, shape, Kernel::write_batch, 0, writes).flops +
                               entry.cost(c.memory, shape, Kernel::read_batch, writes, task.queries_per_episode(tc)).flops;
    double episodes = static_cast<double>(task.test_episodes(tc));
    if (c.readout.name() == "probe") episodes += static_cast<double>(c.readout.integer("train"));
    return per_episode * episodes + 10.0 * static_cast<double>(size.param_floats + size.derived_floats);
}

std::vector<int> tuning_seed_levels(int tuning_seeds) {
    std::vector<int> out;
    if (tuning_seeds <= 0) return out;
    out.push_back(1);
    for (int s = tuning_seeds; s <= kTuningSeedCap * tuning_seeds; s *= 2)
        if (s > out.back()) out.push_back(s);
    if (out.back() < kTuningSeedCap * tuning_seeds) out.push_back(kTuningSeedCap * tuning_seeds);
    return out;
}

namespace {

struct Job {
    std::size_t group, candidate;
    CellSpec cell;
    const ResolvedCell* resolved;  // the candidate's (its Race keeps it)
};

/// One tuning cell's score: its accuracy (the mean over slots; with absent queries the
/// balanced accuracy) and its reads; a failed cell
/// has reads −1 (the sum over processes keeps it: the others hold 0).
constexpr std::size_t kScoreWidth = 2;

void score_cell(const CellResult& r, double* out) {
    if (r.ok && r.abstention) {  // absent queries: the balanced accuracy of answering or abstaining
        double reads = 0;
        for (const auto& s : r.slots) reads += static_cast<double>(s.queries);
        out[0] = r.abstention->balanced, out[1] = reads;
        return;
    }
    if (!r.ok || r.slots.empty()) {
        out[0] = 0.0, out[1] = -1.0;
        return;
    }
    double sum = 0, reads = 0;
    for (const auto& s : r.slots) {
        sum += static_cast<double>(s.correct) / static_cast<double>(s.queries);
        reads += static_cast<double>(s.queries);
    }
    out[0] = sum / static_cast<double>(r.slots.size());
    out[1] = reads;
}

/// Runs this process's share of the jobs on `threads` threads (any order; each writes its
/// own score; `finished` is told of each, one at a time), combines the shares, and returns
/// each job's score (kScoreWidth numbers), in job order.
std::vector<double> run_jobs(const std::vector<Job>& jobs, int threads, bool progress, const std::string& label,
                             const TuningShare& share, const std::function<void(std::size_t, const double*)>& finished) {
    std::vector<std::size_t> mine;
    for (std::size_t j = static_cast<std::size_t>(share.rank); j < jobs.size(); j += static_cast<std::size_t>(share.size))
        mine.push_back(j);
    std::vector<double> score(kScoreWidth * jobs.size(), 0.0), work(jobs.size(), 0.0);
    // the cost model's work of every job, with or without a progress bar: it orders the items below
    for (const std::size_t j : mine) work[j] = cell_work(*jobs[j].resolved, jobs[j].cell.seed);
    // Jobs that read the same single test episode natively (the same task, n, d and tuning
    // seed: candidates that differ only in a memory setting such as softmax's beta) are one
    // work item, run one after another on one thread, so the episode is drawn once (as in
    // runner.cpp).
    const WorkItems grouped = group_by_shared_episode(
        mine, [&](std::size_t j) -> const ResolvedCell& { return *jobs[j].resolved; },
        [&](std::size_t j) { return jobs[j].cell.seed; });
    // Biggest items first (by the cost model): the long ones start early, so a round does not
    // end on one straggler, and the progress estimate sees their cost from the start instead
    // of at the end. The order changes no result: each job writes its own score.
    std::vector<std::size_t> by_work(grouped.cells.size());
    std::vector<double> item_work(by_work.size(), 0.0);
    for (std::size_t i = 0; i < by_work.size(); ++i) {
        by_work[i] = i;
        for (const std::size_t j : grouped.cells[i]) item_work[i] += work[j];
    }
    std::stable_sort(by_work.begin(), by_work.end(), [&](std::size_t a, std::size_t b) { return item_work[a] > item_work[b]; });
    std::vector<std::vector<std::size_t>> items;
    std::vector<double> peak;
    for (const std::size_t i : by_work) items.push_back(grouped.cells[i]), peak.push_back(grouped.peak[i]);
    MemoryGate gate;
    std::exception_ptr failure;
    CellProgress bar(
        mine, [&](std::size_t j) -> const CellSpec& { return jobs[j].cell; },
        [&](std::size_t j) -> const ResolvedCell& { return *jobs[j].resolved; }, label, progress, threads);
    SpinLock journal_lock;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(items.size()); ++i) {
        const MemoryGate::Hold hold(gate, peak[static_cast<std::size_t>(i)]);
        for (const std::size_t j : items[static_cast<std::size_t>(i)]) {
            const auto started = std::chrono::steady_clock::now();
            try {
                score_cell(run_cell(*jobs[j].resolved, jobs[j].cell), &score[kScoreWidth * j]);
                const std::lock_guard<SpinLock> lock(journal_lock);  // never sleeps (core/spin_lock.hpp)
                finished(j, &score[kScoreWidth * j]);
            } catch (...) {
#pragma omp critical(memcap_tuning_failure)
                if (!failure) failure = std::current_exception();
            }
            bar.tick(j, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        }
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

double Race::Tally::sd() const {
    const double m = mean();
    return seeds >= 2 ? std::sqrt(std::max(0.0, (sum_sq - seeds * m * m) / (seeds - 1))) : 0.0;
}

double Race::Tally::var_mean() const {
    if (seeds == 0 || reads <= 0) return 0.25;
    const double se = accuracy_standard_error(mean(), sd(), seeds, reads / seeds);
    return se * se;
}


double pass_chance(double mean, double se) {
    if (!(se > 0)) return mean >= kCapacityThreshold ? 1.0 : 0.0;
    return 0.5 * std::erfc(-(mean - kCapacityThreshold) / (se * std::sqrt(2.0)));
}

std::size_t race_winner(const std::vector<RaceStanding>& standing) {
    const bool any = std::any_of(standing.begin(), standing.end(), [](const RaceStanding& s) { return s.in; });
    const auto counts = [&](const RaceStanding& s) { return s.in || !any; };
    double likeliest = 0;
    for (const auto& s : standing)
        if (counts(s)) likeliest = std::max(likeliest, pass_chance(s.mean, s.se));
    std::size_t best = standing.size();
    for (std::size_t k = 0; k < standing.size(); ++k) {
        const RaceStanding& s = standing[k];
        if (!counts(s) || pass_chance(s.mean, s.se) < likeliest - kPassChanceSlack) continue;
        if (best == standing.size() || s.cost < standing[best].cost ||
            (s.cost == standing[best].cost && s.mean > standing[best].mean))
            best = k;
    }
    return best;
}

std::vector<bool> past_capacity_candidates(const std::vector<CellSpec>& previous, const std::vector<bool>& previous_in,
                                           const std::vector<CellSpec>& here) {
    std::vector<bool> kept(here.size(), false);
    for (std::size_t k = 0; k < here.size(); ++k)
        for (std::size_t j = 0; j < previous.size(); ++j)
            if (previous_in[j] && previous[j].d == here[k].d && previous[j].memory == here[k].memory) kept[k] = true;
    if (std::find(kept.begin(), kept.end(), true) == kept.end()) return std::vector<bool>(here.size(), true);
    // and their neighbours: the settings beside each (the candidates just before and after it
    // at its width) and the same settings at the next narrower and wider width. The best
    // setting and width move with n (a decay or a step that forgets more as more is stored).
    std::vector<int> widths;
    for (const auto& c : here) widths.push_back(c.d);
    std::sort(widths.begin(), widths.end());
    widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
    const auto adjacent = [&](int a, int b) {  // b is the width just below or above a
        const auto i = std::lower_bound(widths.begin(), widths.end(), a) - widths.begin();
        return (i > 0 && widths[static_cast<std::size_t>(i - 1)] == b) ||
               (static_cast<std::size_t>(i + 1) < widths.size() && widths[static_cast<std::size_t>(i + 1)] == b);
    };
    std::vector<bool> near = kept;
    for (std::size_t k = 0; k < here.size(); ++k) {
        if (!kept[k]) continue;
        if (k > 0 && here[k - 1].d == here[k].d) near[k - 1] = true;
        if (k + 1 < here.size() && here[k + 1].d == here[k].d) near[k + 1] = true;
        for (std::size_t j = 0; j < here.size(); ++j)
            if (adjacent(here[k].d, here[j].d) && here[j].memory == here[k].memory) near[j] = true;
    }
    return near;
}

double ladder_pass_chance(double mean, double sd, int seeds, double reads_per_seed, std::int64_t n) {
    const double reads = std::min(reads_per_seed, static_cast<double>(std::max<std::int64_t>(n, 1)));
    return pass_chance(mean, accuracy_standard_error(mean, sd, seeds, reads));
}

std::vector<bool> below_capacity_candidates(const std::vector<CellSpec>& previous, const std::vector<bool>& previous_failed,
                                            const std::vector<CellSpec>& here) {
    std::vector<bool> kept(here.size(), true);
    for (std::size_t k = 0; k < here.size(); ++k)
        for (std::size_t j = 0; j < previous.size(); ++j)
            if (previous_failed[j] && previous[j].d == here[k].d && previous[j].memory == here[k].memory) kept[k] = false;
    if (std::find(kept.begin(), kept.end(), true) == kept.end()) return std::vector<bool>(here.size(), true);
    return kept;
}

bool race_settled(const std::vector<RaceStanding>& standing) {
    bool any = false;
    for (const auto& s : standing) {
        if (!s.in) continue;
        any = true;
        const double p = pass_chance(s.mean, s.se);
        if (p > kSettledPassChance && p < 1.0 - kSettledPassChance) return false;
    }
    return any;
}

// ---------------------------------------------------------------------------------------
// Race: one group's race, its rules only.

Race::Race(const CellSpec& cell) {
    for (auto& c : resolved_candidates(cell)) {
        cost_.push_back(candidate_cost(*c.resolved));
        candidates_.push_back(std::move(c.cell));
        resolved_.push_back(std::move(c.resolved));
    }
    tally_.assign(candidates_.size(), Tally{});
    in_.assign(candidates_.size(), true);
    dropped_.assign(candidates_.size(), false);
    levels_ = tuning_seed_levels(cell.tuning_seeds);
    decided_ = candidates_.size() == 1;  // nothing to choose: no tuning cell
}

double Race::se(std::size_t k) const { return std::sqrt(tally_[k].var_mean()); }

std::vector<RaceStanding> Race::standing() const {
    std::vector<RaceStanding> out;
    for (std::size_t k = 0; k < size(); ++k) out.push_back({in_[k], tally_[k].mean(), se(k), cost_[k]});
    return out;
}

std::vector<bool> Race::failed() const {
    std::vector<bool> out(size(), false);
    for (std::size_t k = 0; k < size(); ++k) {
        const Tally& t = tally_[k];
        out[k] = dropped_[k] || t.failed ||
                 (t.seeds > 0 && t.reads > 0 &&
                  ladder_pass_chance(t.mean(), t.sd(), t.seeds, t.reads / t.seeds, candidates_[k].n) < kLadderFailChance);
    }
    return out;
}

bool Race::surely_failed() const {
    if (inherited_) return true;
    const auto now = standing();
    return race_settled(now) && std::none_of(now.begin(), now.end(), [](const RaceStanding& c) {
               return c.in && pass_chance(c.mean, c.se) >= kSettledPassChance;
           });
}

void Race::start(const Race* previous) {
    started_ = true;
    if (!previous) return;
    if (!previous->surely_failed()) {  // below capacity (so far): drop those that failed there
        const std::vector<bool> kept = below_capacity_candidates(previous->candidates_, previous->failed(), candidates_);
        for (std::size_t k = 0; k < size(); ++k)
            if (!kept[k]) in_[k] = false, dropped_[k] = true;
        if (std::count(in_.begin(), in_.end(), true) <= 1) decided_ = true;  // nothing left to choose
        return;
    }
    // Those left out past capacity are not marked dropped: they never ran there, so should a
    // later group on the ladder be below capacity again they race there.
    const std::vector<bool> kept = past_capacity_candidates(previous->candidates_, previous->in_, candidates_);
    for (std::size_t k = 0; k < size(); ++k) in_[k] = in_[k] && kept[k];
    if (std::count(in_.begin(), in_.end(), true) <= 1) decided_ = inherited_ = true;  // nothing left to choose
}

std::pair<int, int> Race::next_seeds() const {
    return {level_ == 0 ? 0 : levels_[level_ - 1], levels_[level_]};
}

void Race::add(std::size_t k, double accuracy, double reads) {
    Tally& t = tally_[k];
    if (reads < 0) {
        t.failed = true;
        return;
    }
    ++t.seeds;
    t.sum += accuracy, t.sum_sq += accuracy * accuracy;
    t.reads += reads, t.correct += accuracy * reads;
}

void Race::end_level() {
    narrow();
    ++level_;
    const auto left = std::count(in_.begin(), in_.end(), true);
    // Settled: from the second level of seeds on (as `judged` in narrow), every candidate still
    // in surely reaches the capacity threshold or surely does not (race_settled); more seeds
    // would tell some apart, but not change which of them pass, so the race ends there.
    if (left <= 1 || level_ >= levels_.size()) decided_ = true;
    else if (level_ >= 2 && race_settled(standing())) decided_ = settled_ = true;
}

void Race::narrow() {
    // The candidates still in the race: not failed, and within kTuningSeparation standard
    // errors of the leader (the highest mean; ties: the earlier).
    const std::size_t none = size();
    std::size_t lead = none;
    for (std::size_t k = 0; k < size(); ++k) {
        if (tally_[k].failed) in_[k] = false;
        if (in_[k] && (lead == none || tally_[k].mean() > tally_[lead].mean())) lead = k;
    }
    if (lead == none) return;  // every candidate failed
    for (std::size_t k = 0; k < size(); ++k) {
        if (!in_[k] || k == lead) continue;
        const double gap = tally_[lead].mean() - tally_[k].mean();
        const double se = std::sqrt(tally_[lead].var_mean() + tally_[k].var_mean());
        if (gap > kTuningSeparation * se) in_[k] = false;
    }
    // Dominated: a candidate that costs more than one still in, reads no better and is no
    // likelier to reach the capacity threshold, unless it shares the lead (a cheap candidate
    // that ties the leader by luck must not end the race for the others) -- judged only once
    // both have run on `tuning_seeds` seeds, never on the first seed alone (where a cheap
    // candidate's lucky episode would end the race for a better, costlier one).
    const double top = tally_[lead].mean();
    const int judged = levels_.size() > 1 ? levels_[1] : levels_[0];
    const auto chance = [&](std::size_t k) { return pass_chance(tally_[k].mean(), se(k)); };
    std::vector<bool> dominated(size(), false);
    for (std::size_t k = 0; k < size(); ++k)
        for (std::size_t c = 0; c < size() && in_[k] && tally_[k].mean() < top; ++c)
            if (c != k && in_[c] && cost_[c] < cost_[k] && tally_[c].mean() >= tally_[k].mean() &&
                tally_[c].seeds >= judged && tally_[k].seeds >= judged && chance(c) >= chance(k))
                dominated[k] = true;
    for (std::size_t k = 0; k < size(); ++k)
        if (dominated[k]) in_[k] = false;
}

// ---------------------------------------------------------------------------------------
// Races: a grid's races, one per group.

void Races::add(const CellSpec& cell) {
    CellSpec key = cell;
    key.seed = 0;
    if (of_.count(key)) return;
    races_.emplace_back(cell);  // resolves the candidates: UsageError when none can run
    of_.emplace(key, races_.size() - 1);
    asked_.push_back(std::move(key));
    max_candidates_ = std::max(max_candidates_, races_.back().size());
    max_seeds_ = std::max(max_seeds_, static_cast<std::size_t>(races_.back().levels().back()));
}

std::size_t Races::group_of(const CellSpec& cell) const {
    CellSpec key = cell;
    key.seed = 0;
    return of_.at(key);
}

std::vector<std::size_t> Races::predecessors() const {
    std::map<CellSpec, std::vector<std::pair<std::int64_t, std::size_t>>, SameGroupOrder> ladders;
    for (std::size_t g = 0; g < size(); ++g) {  // a ladder: the groups that differ in n only
        CellSpec rung = asked_[g];
        rung.n = 0;
        ladders[rung].emplace_back(asked_[g].n, g);
    }
    std::vector<std::size_t> pred(size(), size());
    for (auto& [ladder, rungs] : ladders) {
        std::sort(rungs.begin(), rungs.end());
        for (std::size_t i = 1; i < rungs.size(); ++i)
            if (rungs[i].first > rungs[i - 1].first) pred[rungs[i].second] = rungs[i - 1].second;
    }
    return pred;
}

std::size_t Races::index(std::size_t g, std::size_t k, int seed) const {
    return (g * max_candidates_ + k) * max_seeds_ + static_cast<std::size_t>(seed);
}

std::size_t Races::index_count() const { return races_.size() * max_candidates_ * max_seeds_; }

// ---------------------------------------------------------------------------------------
// The race file: why each choice won.

std::string race_reason(const Race& race) {
    std::size_t left = 0;
    for (std::size_t k = 0; k < race.size(); ++k) left += race.in(k);
    if (left == 0) return "all failed";
    if (left == 1) return "one left";
    if (race.settled()) return "settled";
    const std::size_t w = race.winner();
    for (std::size_t k = 0; k < race.size(); ++k)
        if (race.in(k) && race.mean(k) > race.mean(w)) return "cheapest of near-ties";
    return "highest mean";
}

const std::string& race_header() {
    static const std::string header =
        "round,memory,memory_spec,task_spec,readout,budget_floats,n,candidates,tuned,mean,se,seeds,runner_up,"
        "runner_up_mean,runner_up_se,runner_up_seeds,margin,reason\n";
    return header;
}

std::string race_rows(const Races& races, int round) {
    std::string out;
    for (std::size_t g = 0; g < races.size(); ++g) {
        const Race& race = races[g];
        if (race.size() < 2) continue;
        const CellSpec& c = races.asked(g);
        const std::size_t w = race.winner();
        std::size_t up = race.size();
        for (std::size_t k = 0; k < race.size(); ++k)
            if (k != w && race.seeds(k) > 0 && (up == race.size() || race.mean(k) > race.mean(up))) up = k;
        std::string row = std::to_string(round) + ",";
        row += csv_field(c.memory.name()) + "," + csv_field(c.memory.canonical()) + "," + csv_field(c.task.canonical()) + "," +
               csv_field(c.readout.canonical()) + ",";
        if (c.budget_floats) row += std::to_string(*c.budget_floats);
        row += "," + std::to_string(c.n) + "," + std::to_string(race.size()) + ",";
        row += csv_field(tuned_label(c, race.candidate(w))) + ",";
        if (race.seeds(w) > 0) row += format_sig(race.mean(w)) + "," + format_sig(race.se(w));
        else row += ",";  // left alone along n before it ran: nothing measured here
        row += "," + std::to_string(race.seeds(w)) + ",";
        if (up < race.size() && race.seeds(w) > 0)
            row += csv_field(tuned_label(c, race.candidate(up))) + "," + format_sig(race.mean(up)) + "," +
                   format_sig(race.se(up)) + "," + std::to_string(race.seeds(up)) + "," +
                   format_sig(race.mean(w) - race.mean(up));
        else
            row += ",,,,";
        out += row + "," + race_reason(race) + "\n";
    }
    return out;
}

// ---------------------------------------------------------------------------------------
// resolve_tuning: the races run, their cells shared over threads and processes and kept in
// the journal; the trace and the choices printed; the cells rewritten.

namespace {

/// The tuning cells of this round: every candidate still in of every running race, on the
/// tuning seeds of its level; `index` gets each one's journal index.
std::vector<Job> round_jobs(const Races& races, std::uint64_t tuning_seed_offset, std::vector<std::size_t>& index) {
    std::vector<Job> jobs;
    for (std::size_t g = 0; g < races.size(); ++g) {
        const Race& race = races[g];
        if (!race.running()) continue;
        const auto [from, to] = race.next_seeds();
        for (std::size_t k = 0; k < race.size(); ++k) {
            if (!race.in(k)) continue;
            for (int s = from; s < to; ++s) {
                CellSpec c = race.candidate(k);
                c.seed = kTuningSeedBase + tuning_seed_offset + static_cast<std::uint64_t>(s);
                jobs.push_back(Job{g, k, std::move(c), race.resolution(k).get()});
                index.push_back(races.index(g, k, s));
            }
        }
    }
    return jobs;
}

/// Each job's score (kScoreWidth numbers, in job order): those the journal keeps (rank 0
/// looks; every rank learns) and the others computed (run_jobs), which rank 0 keeps.
/// `computed` and `kept` count them.
std::vector<double> score_jobs(const std::vector<Job>& jobs, const std::vector<std::size_t>& index, int threads,
                               bool progress, const std::string& label, const TuningShare& share,
                               const TuningJournal& journal, std::size_t& computed, std::size_t& kept) {
    std::vector<double> known(3 * jobs.size(), 0.0);  // (found, accuracy, reads)
    if (journal.find)
        for (std::size_t j = 0; j < jobs.size(); ++j)
            if (journal.find(index[j], known[3 * j + 1], known[3 * j + 2])) known[3 * j] = 1.0;
    if (share.size > 1) share.combine(known);
    std::vector<Job> todo;
    std::vector<std::size_t> todo_job;
    for (std::size_t j = 0; j < jobs.size(); ++j)
        if (known[3 * j] == 0.0) todo.push_back(jobs[j]), todo_job.push_back(j);
    const bool root = share.rank == 0;
    const auto done = todo.empty() ? std::vector<double>{}
                                   : run_jobs(todo, threads, progress, label, share, [&](std::size_t t, const double* sc) {
                                         if (root && journal.keep) journal.keep(index[todo_job[t]], sc[0], sc[1]);
                                     });
    // Rank 0 keeps the other ranks' cells once their scores have arrived.
    if (root && journal.keep && share.size > 1)
        for (std::size_t t = 0; t < todo.size(); ++t)
            if (t % static_cast<std::size_t>(share.size) != 0)
                journal.keep(index[todo_job[t]], done[kScoreWidth * t], done[kScoreWidth * t + 1]);
    std::vector<double> score(kScoreWidth * jobs.size(), 0.0);
    for (std::size_t j = 0; j < jobs.size(); ++j)
        score[kScoreWidth * j] = known[3 * j + 1], score[kScoreWidth * j + 1] = known[3 * j + 2];
    for (std::size_t t = 0; t < todo.size(); ++t)
        for (std::size_t w = 0; w < kScoreWidth; ++w) score[kScoreWidth * todo_job[t] + w] = done[kScoreWidth * t + w];
    computed += todo.size(), kept += jobs.size() - todo.size();
    return score;
}

/// Runs every race to its end, round by round: a race starts once its predecessor on its
/// ladder has ended (past capacity it races only what was left there), and each round runs
/// the next level of every race that is running.
void run_races(Races& races, int threads, bool progress, std::uint64_t tuning_seed_offset, const TuningShare& share,
               const TuningJournal& journal) {
    const std::size_t groups = races.size();
    if (progress)
        std::cerr << "memcap: choosing widths and settings for " << groups << " group" << (groups == 1 ? "" : "s")
                  << " on tuning seeds: every candidate on the first, then those not yet told apart from the leader "
                     "on more (up to "
                  << kTuningSeedCap << " x tuning_seeds); at each n, none that surely failed at the next smaller n, "
                     "and past a memory's capacity only those left there\n";
    const std::vector<std::size_t> pred = races.predecessors();
    std::size_t round = 0, computed = 0, kept = 0;
    for (;;) {
        for (bool more = true; more;) {  // start every race whose predecessor has ended (in ladder order)
            more = false;
            for (std::size_t g = 0; g < groups; ++g)
                if (!races[g].started() && !races[g].decided() && (pred[g] == groups || races[pred[g]].decided()))
                    races[g].start(pred[g] == groups ? nullptr : &races[pred[g]]), more = true;
        }
        std::vector<std::size_t> index;  // each job's index in the journal
        const std::vector<Job> jobs = round_jobs(races, tuning_seed_offset, index);
        if (jobs.empty()) break;
        const std::string label = round == 0 ? "tuning" : "tuning (round " + std::to_string(round + 1) + ")";
        const auto score = score_jobs(jobs, index, threads, progress, label, share, journal, computed, kept);
        for (std::size_t j = 0; j < jobs.size(); ++j)
            races[jobs[j].group].add(jobs[j].candidate, score[kScoreWidth * j], score[kScoreWidth * j + 1]);
        for (std::size_t g = 0; g < groups; ++g)
            if (races[g].running()) races[g].end_level();
        ++round;
    }
    if (progress)
        std::cerr << "memcap: " << computed << " tuning cells computed" << (kept ? " and " + std::to_string(kept) + " kept from before" : std::string())
                  << ", in " << round << " round" << (round == 1 ? "" : "s") << "\n";
}

/// MEMCAP_RACE_TRACE=1: how each race ended, on stderr (docs/frontier.md).
void trace_races(const Races& races, const std::vector<std::size_t>& winner) {
    const char* trace = std::getenv("MEMCAP_RACE_TRACE");
    if (!trace || std::string(trace) == "0") return;
    for (std::size_t g = 0; g < races.size(); ++g) {
        const Race& race = races[g];
        std::cerr << "memcap: race (" << group_label(races.asked(g)) << ")\n";
        for (std::size_t k = 0; k < race.size(); ++k)
            std::cerr << "  d=" << race.candidate(k).d << " " << race.candidate(k).memory.canonical() << " seeds="
                      << race.seeds(k) << " mean=" << race.mean(k) << " se=" << race.se(k) << " cost=" << race.cost(k)
                      << (race.in(k) ? " in" : "") << (race.dropped(k) ? " dropped" : "") << (k == winner[g] ? " WINNER" : "")
                      << "\n";
    }
}

/// A run of a few groups says what each chose and the shape it buys (a sweep's are in its CSV).
void print_choices(const Races& races, const std::vector<std::size_t>& winner) {
    std::set<std::string> tasks;
    for (std::size_t g = 0; g < races.size(); ++g) tasks.insert(races.asked(g).task.canonical());
    for (std::size_t g = 0; g < races.size(); ++g) {
        const CellSpec& c = races.asked(g);
        const ResolvedCell& w = *races[g].resolution(winner[g]);
        std::cerr << "memcap: " << c.memory.name() << " on " << (tasks.size() > 1 ? c.task.canonical() : c.task.name())
                  << " at " << (c.budget_floats ? describe_budget(*c.budget_floats, c.memory.has(kPrecisionKey)) : std::string("natural size"))
                  << ", n=" << c.n << ": chose " << tuned_label(c, races[g].candidate(winner[g])) << " ("
                  << describe_size(w.size);
        const Precision p = spec_precision(w.cell.memory);
        if (p != Precision::fp32 || c.memory.has(kPrecisionKey))
            std::cerr << "; held at " << precision_name(p) << ": "
                      << state_bits(p, w.size, w.shape, w.size.state_floats_after(w.task->writes_per_episode(w.at(0))))
                      << " bits";
        std::cerr << ")\n";
    }
}

}  // namespace

void resolve_tuning(std::vector<CellSpec>& cells, Races& races, ResolvedCells& resolved, int threads, bool progress,
                    std::uint64_t tuning_seed_offset, const TuningShare& share, const TuningJournal& journal) {
    if (races.empty()) return;
    run_races(races, threads, progress, tuning_seed_offset, share, journal);
    // The winner (race_winner): the one left, or among those still in the cheapest of those
    // about as likely to reach the capacity threshold as the likeliest (every candidate if all
    // failed).
    std::vector<std::size_t> winner(races.size());
    for (std::size_t g = 0; g < races.size(); ++g) winner[g] = races[g].winner();
    trace_races(races, winner);
    if (progress && races.size() <= kPrintedChoices) print_choices(races, winner);
    std::vector<std::size_t> group(cells.size(), races.size());  // each tuned cell's, before any is rewritten
    for (std::size_t i = 0; i < cells.size(); ++i)
        if (cells[i].needs_tuning())
            group[i] = i > 0 && group[i - 1] < races.size() && same_but_seed(cells[i], cells[i - 1]) ? group[i - 1] : races.group_of(cells[i]);
    for (std::size_t i = 0; i < cells.size(); ++i) {
        CellSpec& c = cells[i];
        if (!c.needs_tuning()) continue;
        const std::size_t g = group[i];
        const CellSpec& chosen = races[g].candidate(winner[g]);
        resolved[i] = races[g].resolution(winner[g]);  // each tuned cell runs through its winner's resolution
        c.tuned = tuned_label(c, chosen);
        c.d = chosen.d;
        c.memory = chosen.memory;
        c.d_candidates.clear();
        c.tuning_seeds = 0;
    }
}

}  // namespace memcap
