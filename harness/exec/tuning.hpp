// memcap/harness/exec/tuning.hpp — choices made on tuning seeds: the code width and memory settings.
//
// A cell may leave its width open (`d = best`) or a memory parameter that
// declares candidates (`softmax:beta=best`; `memcap list` shows each
// parameter's candidates). For each group of such cells — one (memory, task,
// readout, budget, n), every seed — the candidate combinations race on
// **tuning seeds** kTuningSeedBase + 0, 1, ...: seed numbers no scored seed can
// have (scored seeds are below 1,000,000), so their episodes and memory
// parameters come from streams the scored cells never draw from, and the
// reported accuracy carries no selection bias.
//
// The race (a choice with power: candidates are told apart by enough tuning
// data, and those that cannot be told apart go to the cheapest):
//   1. every candidate runs on the first tuning seed (a group with one candidate
//      has nothing to choose: it runs no tuning cell);
//   2. the candidates still in the race — those whose mean tuning accuracy is
//      within kTuningSeparation standard errors of the leader's (the standard
//      error of the difference of the two means) — run on more tuning seeds:
//      up to `tuning_seeds` S, then 2S, 4S, ... up to the cap kTuningSeedCap × S;
//      a candidate that falls out of the band is out for good, and so is one that
//      is dominated: it costs more than another still in, reads no better, is no
//      likelier to reach the capacity threshold (pass_chance), and does not share
//      the lead -- judged once both have run on `tuning_seeds` seeds, never on the
//      first seed alone, where one lucky episode of a cheap candidate would end the
//      race for a better, costlier one;
//   3. the race ends when one candidate is left, or at the cap; the winner is the
//      one left, or among those still in at the cap the **cheapest** by the
//      registry's cost model (candidate_cost) of those about as likely to reach the
//      capacity threshold as the likeliest (race_winner: a near-tie never goes to a
//      cheaper candidate that would cost a capacity point); equal costs (settings of
//      one width, such as the cache's beta) go to the higher tuning mean, then to the
//      earlier candidate (the smaller width, then the earlier value in the list).
// A candidate's accuracy on one tuning seed is its fraction of correct reads (the
// mean over slots on tasks with slots). The standard error of its mean over m seeds
// of q reads is the suite's one rule (harness/results/stats.hpp): the spread between
// seeds (episodes differ, and the reads of one episode are not independent) with one
// seed's binomial sd as its floor, max(sd, √(p(1 − p)/q)) / √m, p the mean clamped to
// [1/q, 1 − 1/q], which is not 0 at 0% or 100%, so a perfect score on a few reads
// does not separate. A candidate whose
// cell fails (a non-finite read) is out; when every candidate fails, the cheapest
// is taken (its cells then report the failure).
// Every cell of the group is then rewritten with the choice (d, memory spec) and
// its `tuned` column names what was chosen and its value ("d=64", "beta=8", "d=64,beta=8").
//
// Default widths for `d = best`: 2, 4, 8, ... up to the cell's budget B (a code
// wider than the whole state cannot be held; HRR's natural width is D = B), each
// one the memory can be built with at that budget (and the task can be posed at)
// whose cell needs at most kTuningMaxCellBytes. The list starts at the narrowest
// width at which codes can differ (kNarrowestWidth), so a memory whose capacity
// at a small budget lies at a narrow width (the cache at 1024 floats holds
// n = 256 pairs only at d = 2: 2·n·d floats) is not cut off by where the list
// starts — rules that do not depend on the
// machine, so the candidates, hence the choice, are the same everywhere. The
// choice depends only on the group and the tuning seeds (accuracies are summed in
// a fixed order, costs come from a model, not a clock), so it is the same at any
// thread or rank count and on every resume. A sweep journals its tuning cells
// (TuningJournal), so a resumed sweep computes only those not yet done.
#pragma once

#include "core/seeds.hpp"
#include "harness/eval/cell.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace memcap {

/// The narrowest default width of `d = best`: 2, the narrowest at which unit codes can differ
/// in more than sign. At d = 1 every unit key and value is +1 or -1, so at most two pairs can be
/// told apart; the tasks refuse d = 1 wherever two codes must differ (Task::require_distinct_codes),
/// and where they do not (one pair) there is nothing to measure. A width list (`d = best:1,2`) may
/// still name 1.
constexpr int kNarrowestWidth = 2;

// kTuningSeedBase (the first tuning seed; tuning seed i is kTuningSeedBase + i): core/seeds.hpp.
/// The largest estimated peak (bytes) of a default candidate: wider default widths are
/// skipped, on every machine alike. (A width the user lists is checked against the
/// machine's memory instead, and refused when it cannot run.) Half a GB keeps the main
/// job's cells, two at a time, within about 1 GB; what it skips there is mostly HRR's
/// widest mapped codes (dense D × d maps and their spectra), which read no better than
/// its natural width d = D and cost over ten times more (docs/frontier.md).
constexpr double kTuningMaxCellBytes = 5e8;
/// A candidate stays in the race while its mean is within this many standard errors
/// (of the difference) of the leader's.
constexpr double kTuningSeparation = 2.0;
/// The race adds tuning seeds up to this many times `tuning_seeds`.
constexpr int kTuningSeedCap = 8;
/// Capacity: the largest n recalled with mean accuracy at least this (the capacity table's
/// and the theory's threshold). The race's winner rule uses it to keep a near-tie from going
/// to a cheaper candidate that is less likely to reach it (race_winner).
constexpr double kCapacityThreshold = 0.9;
/// A candidate still in the race at its end is eligible to win when its chance of reaching
/// kCapacityThreshold is at most this much below the likeliest candidate's (race_winner).
constexpr double kPassChanceSlack = 0.1;
/// The race ends early (race_settled) once every candidate still in reaches
/// kCapacityThreshold with a pass_chance above 1 − this, or below this: 0.001, a mean at
/// least 3.1 standard errors from the threshold.
constexpr double kSettledPassChance = 0.001;

/// Below capacity a group drops, before it starts, the candidates that surely failed at the
/// next smaller n on its ladder (below_capacity_candidates): a memory reads no better with more
/// pairs to hold. The evidence must be strong, since most such candidates ran on one tuning
/// seed: a chance of reaching kCapacityThreshold below this (4.75 standard errors), with each
/// seed's reads counted as at most n independent ones (ladder_pass_chance).
constexpr double kLadderFailChance = 1e-6;

/// Where one candidate stands when its group's race ends: still in (not told apart from the
/// leader, not dominated, not failed), its mean tuning accuracy and the standard error of
/// that mean (Tally: the larger of the spread between seeds and the binomial error), and its
/// cost (candidate_cost).
struct RaceStanding {
    bool in = true;
    double mean = 0, se = 0, cost = 0;
};

/// The chance that a candidate's true mean accuracy reaches kCapacityThreshold, from its
/// tuning mean and standard error (a normal approximation): Φ((mean − threshold) / se).
double pass_chance(double mean, double se);

/// The race's winner among `standing` (every candidate when none is still in: all failed):
/// of the candidates still in, those whose pass_chance is within kPassChanceSlack of the
/// likeliest's are eligible, and the cheapest of them wins; equal costs go to the higher
/// mean, then to the earlier candidate. Where every candidate surely passes (or surely
/// fails) this is the cheapest still in; near the threshold, a cheaper candidate that tied
/// the leader within the race's standard errors but is less likely to pass does not win.
std::size_t race_winner(const std::vector<RaceStanding>& standing);

/// Whether a race is settled: some candidate is still in, and each one still in surely
/// passes or surely fails (pass_chance above 1 − kSettledPassChance or below it). More seeds
/// could still tell such candidates apart, but not change which of them reach the capacity
/// threshold: the race's question is answered, and it ends (from its second level of seeds
/// on, when every candidate still in has run on `tuning_seeds` seeds).
bool race_settled(const std::vector<RaceStanding>& standing);

/// A candidate's chance of reaching kCapacityThreshold as the ladder judges it (kLadderFailChance):
/// pass_chance with the suite's standard error (stats.hpp) of a mean over `seeds` seeds of spread
/// `sd`, each seed's reads counted as min(reads_per_seed, n): the reads of one episode of n pairs
/// ask about n keys, and 32 reads of 4 pairs are not 32 independent chances to be wrong.
double ladder_pass_chance(double mean, double sd, int seeds, double reads_per_seed, std::int64_t n);

/// Below capacity: the candidates a group races when the same group at the next smaller n
/// (`previous`) did not end with every candidate surely failing. All but the candidates (the
/// same width and memory settings) that failed there (`previous_failed`: their chance was below
/// kLadderFailChance there, a cell of theirs failed, or they had been dropped there for failing
/// at a smaller n still): a memory that surely misses the threshold with fewer pairs misses it
/// with more. Every candidate when none would be left.
std::vector<bool> below_capacity_candidates(const std::vector<CellSpec>& previous, const std::vector<bool>& previous_failed,
                                            const std::vector<CellSpec>& here);

/// Past capacity: the candidates a group races when the same group at the next smaller n
/// (`previous`, with those still in at its end) ended with every candidate still in surely
/// failing (pass_chance below kSettledPassChance). Those still in there (the same width and
/// memory settings), and their neighbours — the candidates just before and after each at its
/// width, and the same settings at the next narrower and wider width, since the best decay,
/// step and width move with n; every candidate when none of them is among `here`. The
/// others had been told apart from the leader at the smaller n, where each reads better
/// than here.
std::vector<bool> past_capacity_candidates(const std::vector<CellSpec>& previous, const std::vector<bool>& previous_in,
                                           const std::vector<CellSpec>& here);

/// The machine-independent cost of a candidate cell that breaks ties in the race: the
/// FLOPs its memory's batched write and read declare (the registry's cost model) per
/// episode, times the episodes it writes (scored, plus the probe's training episodes),
/// plus 10 FLOPs per float of fixed parameters and derived tables it draws or derives
/// (a Gaussian entry, a spectrum's share of an FFT). A backend without a cost model: the
/// cell's rough work (cell_work).
double candidate_cost(const ResolvedCell& cell);

/// The tuning seeds a group of `tuning_seeds` S runs a candidate on, in the order the
/// race reaches them: 1, S, 2S, 4S, ... up to kTuningSeedCap × S.
std::vector<int> tuning_seed_levels(int tuning_seeds);

/// Tuning cells a group of `candidates` combinations runs on `seeds` tuning seeds: at
/// least (every candidate once, then the race is decided) and at most (every candidate
/// to the cap). A group with one candidate has nothing to choose and runs none.
inline std::size_t tuning_cell_min(std::size_t candidates, int seeds) { return seeds <= 0 || candidates < 2 ? 0 : candidates; }
inline std::size_t tuning_cell_max(std::size_t candidates, int seeds) {
    return seeds <= 0 || candidates < 2 ? 0 : candidates * static_cast<std::size_t>(kTuningSeedCap) * static_cast<std::size_t>(seeds);
}

/// How the tuning cells are shared between the processes of one sweep (MPI ranks):
/// process `rank` of `size` computes every size-th tuning cell from its rank on, then
/// `combine` sums the scores element-wise over the processes (each score is computed
/// by exactly one, the others hold 0, so the sum is exact) and `agree` takes the
/// largest status (1: this process failed). One process: computes everything.
struct TuningShare {
    int rank = 0, size = 1;
    std::function<void(std::vector<double>&)> combine;
    std::function<int(int)> agree;
};

/// Where finished tuning cells are kept across a crash (a sweep's tuning journal). A
/// tuning cell is named by one index (`index`: its group in order of first appearance,
/// its candidate and its tuning seed); its score is two numbers (its accuracy and its
/// reads; reads −1: it failed). `find` returns true and fills the score when the cell is
/// kept; `keep` keeps one (called from one thread at a time). Only the first process
/// (rank 0) holds one; what it finds is shared with the others. Empty functions: nothing
/// is kept, everything is computed.
struct TuningJournal {
    std::function<bool(std::size_t index, double& accuracy, double& reads)> find;
    std::function<void(std::size_t index, double accuracy, double reads)> keep;
};

/// One group's race (see above), built once from the group's candidates, each resolved once.
/// It holds the race's rules and nothing else: whoever drives it runs the tuning cells it asks
/// for (next_seeds) — on threads, over MPI ranks, from a journal — and hands it their scores
/// (add), then closes the level (end_level) until it is decided; winner() is the choice.
class Race {
public:
    /// The race of `cell`'s group (a cell that needs tuning): every combination it tries, in tie
    /// order (smaller width first, then candidate order), as cells with seed 0 and nothing left
    /// to tune, each resolved; only those resolve_cell accepts (and, for default widths, of
    /// at most kTuningMaxCellBytes). UsageError naming the cell when none can run.
    explicit Race(const CellSpec& cell);

    std::size_t size() const { return candidates_.size(); }
    const CellSpec& candidate(std::size_t k) const { return candidates_[k]; }
    const std::shared_ptr<const ResolvedCell>& resolution(std::size_t k) const { return resolved_[k]; }
    double cost(std::size_t k) const { return cost_[k]; }  // candidate_cost
    /// Tuning seeds candidate k has run on, its mean accuracy and that mean's standard error.
    int seeds(std::size_t k) const { return tally_[k].seeds; }
    double mean(std::size_t k) const { return tally_[k].mean(); }
    double se(std::size_t k) const;
    bool in(std::size_t k) const { return in_[k]; }           // still in the race
    bool dropped(std::size_t k) const { return dropped_[k]; }  // left out for failing at a smaller n
    /// The seed levels (tuning_seed_levels of the group's tuning seeds).
    const std::vector<int>& levels() const { return levels_; }

    /// Starts the race once the same group at the next smaller n (`previous`, null when there
    /// is none) has ended: below capacity it drops the candidates that surely failed there
    /// (below_capacity_candidates), past capacity it keeps those left there and their
    /// neighbours (past_capacity_candidates). A race of one candidate needs no start: it is
    /// decided from the first.
    void start(const Race* previous);
    bool started() const { return started_; }
    bool decided() const { return decided_; }
    /// Started and not decided: its candidates still in run on next_seeds().
    bool running() const { return started_ && !decided_; }
    /// The tuning seeds (numbered from 0) the candidates still in run on in this level: [first, second).
    std::pair<int, int> next_seeds() const;

    /// One tuning cell's score for candidate k: its accuracy and its reads (reads < 0: the cell failed).
    void add(std::size_t k, double accuracy, double reads);
    /// Ends a level: the candidates told apart from the leader, dominated or failed are out; the
    /// race is decided when one is left, at the cap, or when it is settled (race_settled, from
    /// the second level on).
    void end_level();

    /// Where each candidate stands now.
    std::vector<RaceStanding> standing() const;
    /// The choice (race_winner of standing()).
    std::size_t winner() const { return race_winner(standing()); }
    /// The candidates that failed, as the ladder judges (kLadderFailChance): dropped, a failed
    /// cell, or a chance of reaching the threshold below kLadderFailChance.
    std::vector<bool> failed() const;
    /// Whether the race ended with every candidate still in surely failing (or inherited one
    /// candidate past capacity without running).
    bool surely_failed() const;
    /// Whether the race ended settled (race_settled) with more than one candidate still in,
    /// before the cap.
    bool settled() const { return settled_; }

private:
    /// One candidate's tuning so far: seeds run, the sums of its accuracies and of their
    /// squares (in seed order), its reads and correct reads, and whether a cell failed.
    struct Tally {
        int seeds = 0;
        double sum = 0, sum_sq = 0, reads = 0, correct = 0;
        bool failed = false;
        double mean() const { return seeds > 0 ? sum / seeds : 0.0; }
        double sd() const;
        /// Variance of the mean: the square of the suite's one standard error (stats.hpp), the
        /// spread between seeds with one seed's binomial sd as its floor.
        double var_mean() const;
    };
    void narrow();

    std::vector<CellSpec> candidates_;
    std::vector<std::shared_ptr<const ResolvedCell>> resolved_;
    std::vector<double> cost_;
    std::vector<Tally> tally_;
    std::vector<bool> in_, dropped_;
    std::vector<int> levels_;
    std::size_t level_ = 0;  // levels closed
    bool started_ = false, decided_ = false;
    bool inherited_ = false;  // left with one candidate past capacity, never run
    bool settled_ = false;    // ended by race_settled, more than one still in
};

/// The races of a grid's tuned groups (one per group, in order of first appearance), each
/// built once; check_cells builds them as it checks the cells, and resolve_tuning runs them.
class Races {
public:
    /// Adds the race of `cell`'s group (a cell that needs tuning) unless it is there.
    void add(const CellSpec& cell);
    std::size_t size() const { return races_.size(); }
    bool empty() const { return races_.empty(); }
    Race& operator[](std::size_t g) { return races_[g]; }
    const Race& operator[](std::size_t g) const { return races_[g]; }
    /// The group of `cell` (a cell that needs tuning, whose race was added).
    std::size_t group_of(const CellSpec& cell) const;
    /// The cell a group was added with, seed 0.
    const CellSpec& asked(std::size_t g) const { return asked_[g]; }
    /// Each group's predecessor on its ladder: the same group at the next smaller n
    /// (size() when there is none).
    std::vector<std::size_t> predecessors() const;
    /// The tuning journal's index of candidate k of group g on tuning seed s, and how many
    /// indices there are (every index is below it; 0 when nothing is left to choose).
    std::size_t index(std::size_t g, std::size_t k, int seed) const;
    std::size_t index_count() const;

private:
    std::map<CellSpec, std::size_t, SameGroupOrder> of_;
    std::vector<Race> races_;
    std::vector<CellSpec> asked_;
    std::size_t max_candidates_ = 0, max_seeds_ = 0;
};

/// Why a decided race's winner won, in words (the race file's `reason`): "one left" (the
/// others were told apart, dominated, failed or left out along n), "settled" (race_settled
/// ended it: the cheapest of those as likely to pass), at the cap "highest mean" (the winner
/// leads those still in) or "cheapest of near-ties" (a cheaper one among them, as likely to
/// pass), or "all failed" (every candidate's cell failed: the cheapest).
std::string race_reason(const Race& race);

/// The race file (a sweep's NAME_race.csv): its header, and one row per group of `races` with
/// a choice to make (two candidates or more), in group order, `round` in its first column
/// (0: the grid; r: crossing round r). A row names the group (memory_spec as the sweep gave it,
/// task_spec, readout, budget_floats, n), the winner (its `tuned` text, its tuning mean, standard
/// error and seeds), the runner-up (the other candidate with the highest tuning mean, the earlier
/// on ties, of those that ran: the same), the margin (the winner's mean less the runner-up's; below
/// 0 where a cheaper near-tie won, or where the runner-up left the race on fewer seeds -- told
/// apart, dominated or judged at the ladder -- with a higher mean on them) and race_reason. A group whose race left one candidate before
/// it ran (past capacity, where the smaller n left one) has 0 seeds, no mean and no runner-up
/// (those fields empty).
const std::string& race_header();
std::string race_rows(const Races& races, int round);

/// Runs every race of `races` (see above), computing the tuning cells on `threads` threads
/// (and over the processes of `share`, kept in `journal`), and rewrites the cells that need
/// tuning with their group's choice; `resolved` (as check_cells returned it) gets each
/// such cell's chosen resolution. `tuning_seed_offset` shifts the tuning seeds (tests use
/// it to show that the choice depends on them); 0 otherwise.
void resolve_tuning(std::vector<CellSpec>& cells, Races& races, ResolvedCells& resolved, int threads, bool progress,
                    std::uint64_t tuning_seed_offset = 0, const TuningShare& share = {}, const TuningJournal& journal = {});

}  // namespace memcap
