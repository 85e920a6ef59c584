// memcap/harness/exec/crossing.hpp — capacity as a crossing: probes and scored seeds near each crossing.
//
// A sweep block with `crossing = T1 T2 ...` (accuracy thresholds in (0, 1)) measures, after the
// sweep's grid, where each of its groups' mean accuracy crosses each threshold along n, spending
// cells only there. A group is a (memory spec as written, task, readout, budget, d as written) of
// the block, with every n of the block; only tasks whose capacity axis is n take part (`memcap
// list --json` capacity_axis; lag and copy tasks keep their rule and get no probes).
//
// The bracket of threshold t: with the block's n ascending, n_1 < ... < n_K, and a_i the mean
// accuracy at n_i over the grid's seeds 0..S-1 (a cell's accuracy: the mean of its rows' over slots;
// failed cells left out; no cell that ran: below every threshold), i the last index with a_i >= t:
// the bracket is (n_i, n_{i+1}) — the last downward crossing, the rule the report reads n* by
// (scripts/memcap_report/crossing.py), so on a curve that is not monotone both refine and read the
// same crossing. None when no a_i >= t (the crossing lies below the grid) or i = K (above it).
// Brackets come from the grid's seeds only, so more seeds never move them.
//
// Rounds, each planned only from the results of the grid and the rounds before it (all
// deterministic), so the plan is the same at any thread or rank count and on every resume:
//   round 1   probes: round(n_lo · (n_hi/n_lo)^(k/(P+1))), k = 1..P (P = crossing_probes), the
//             distinct values strictly inside each bracket, on the grid's seeds 0..S-1; with the
//             block's settings (d = best and key = best race at a probe as at any n);
//   every round  more scored seeds at points near a crossing (the bracket's ends and its probes),
//             at the point's settings (the choice made there is kept): seeds m .. min(2m, cap) - 1
//             for a point with m seeds, where
//     - a threshold in crossing_resolve (the interval rule): the group's curve (every n it has
//       run, all their seeds) gives n* and its 95% bootstrap interval (crossing_estimate, the
//       report's rule; for a task with slot parts, each part's curve and the curve of their lowest
//       mean, as the report reads them); while the half-width exceeds crossing_resolve_width x n* (or a bound of
//       the interval lies beyond the n tried), the points that decide it get seeds up to
//       crossing_resolve_seeds: the two n whose means n* is interpolated between, and every point
//       whose mean lies within kCrossingSeparation standard errors of the threshold (those can
//       move the bracket);
//       with crossing_resolve_probes = Q > 0, also: each threshold in crossing_resolve is served
//       for every group, whether or not the cells' mean has a bracket there (a part's crossing may
//       lie where the mean of the parts has none), and while a reading's n* is not resolved, Q
//       reading probes go inside that reading's own bracket — the bracket of the curve the report
//       reads (every n run, all their seeds; each part and their lowest), log-spaced as above, the
//       n not yet run — on the grid's seeds 0..S-1 (they get more seeds as any point does);
//     - any other threshold (the separation rule): a point of its bracket whose mean over its m
//       seeds is within kCrossingSeparation standard errors (the suite's rule, stats.hpp) of the
//       threshold gets seeds up to C = crossing_seeds.
// The rounds end when no point asks for more. Seed numbers stay below 1,000,000 (tuning seeds
// are disjoint, tuning.hpp), and the same seed is the same episode for every memory (pairing).
// A point shared by two blocks (the same group and n) is one point: no cell runs twice.
#pragma once

#include "harness/eval/cell.hpp"
#include "harness/exec/grid.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace memcap {

/// A point's mean stays uncertain (more seeds) while within this many standard errors of a threshold.
/// (Both rules below use it.)
constexpr double kCrossingSeparation = 2.0;

/// Probe sizes strictly inside (lo, hi): round(lo · (hi/lo)^(k/(probes+1))) for k = 1..probes,
/// the distinct ones with lo < n < hi, ascending.
std::vector<std::int64_t> crossing_probe_sizes(std::int64_t lo, std::int64_t hi, int probes);

/// The bracket of `threshold` along `means` (at ascending n): the index j of its upper end (its
/// lower end is j - 1), j - 1 the last index whose mean is at or above the threshold (NaN is
/// below); none when no mean is, or the last index is.
std::optional<std::size_t> crossing_bracket(const std::vector<double>& means, double threshold);

/// n* of a curve (ns ascending, its means) at `threshold`, by the bracket's rule: interpolated
/// linearly in log n between the bracket's ends where the straight line between their means meets
/// the threshold; +inf when the largest n passes, -inf when none does.
double crossing_n(const std::vector<std::int64_t>& ns, const std::vector<double>& means, double threshold);

/// One n of a curve: its scored seeds' numbers and accuracies (ok cells only); or, with `parts`,
/// several readings of it (a task's slot parts), the point's mean then the lowest of their means.
struct CurvePoint {
    std::int64_t n = 0;
    std::vector<std::pair<std::uint64_t, double>> seeds;
    std::vector<std::vector<std::pair<std::uint64_t, double>>> parts;
};

/// n* and its 95% interval, as the report computes them (scripts/memcap_report/crossing.py):
/// `resamples` resamples of the seed numbers the curve holds (with replacement, as many as there
/// are; a fixed generator, so the same curve gives the same interval); in each, every point's mean
/// from the drawn seeds it has (a point none of whose seeds was drawn keeps its mean) and n*
/// again; lo and hi are the 2.5th and 97.5th percentiles (nearest ranks). ±inf as crossing_n.
struct CrossingEstimate {
    double value = 0, lo = 0, hi = 0;
    /// The half-width is at most `width` x n* (false when any of the three is not finite).
    bool resolved(double width) const;
};
CrossingEstimate crossing_estimate(const std::vector<CurvePoint>& curve, double threshold, int resamples = 1000);

/// One cell's score from its CSV rows: the mean of its rows' accuracy_frac (over slots), the sum of
/// its rows' queries, and whether every row's status is ok.
struct CellScore {
    double accuracy = 0, queries = 0;
    bool ok = false;
    std::vector<std::pair<std::string, double>> slots;  // each row's slot and accuracy_frac
};
CellScore cell_score(const std::string& rows);

/// A cell a crossing round adds: made from `source` — round -1: the grid's cell `index` as written
/// (untuned), with this n and seed (a probe's first seeds); round 0: the grid's cell `index` as it
/// ran (its choices made), round r ≥ 1: round r's cell `index` as it ran, with this seed (more
/// seeds at a point that has run). `block` and `group` order the rows in the CSV.
struct CrossingCell {
    int source_round = -1;
    std::size_t index = 0;
    std::int64_t n = 0;
    std::uint64_t seed = 0;
    std::size_t block = 0, group = 0;
};

/// The crossing rounds of a sweep: which cells each adds, from the scores of every cell before it.
class CrossingPlan {
public:
    CrossingPlan() = default;
    /// `blocks` as configured and `grid` their cells as written (SweepConfig::cells()).
    CrossingPlan(const std::vector<GridBlock>& blocks, const std::vector<CellSpec>& grid);

    /// Whether some block asks for crossings on a task along n.
    bool active() const { return !groups_.empty(); }
    /// Rounds planned so far.
    std::size_t rounds() const { return round_keys_.size(); }

    /// The score of cell `index` of round `round` (0: the grid; r: the r-th planned round).
    void score(std::size_t round, std::size_t index, const CellScore& s);

    /// The next round's cells (empty: the rounds are over), from the scores given so far (every
    /// cell of every round before it must have one), ordered by block, group, n, seed. A probe
    /// point is asked of `can_run` first (its cell as written, seed 0, at the probe's n) and left
    /// out when it cannot run.
    std::vector<CrossingCell> next_round(const std::function<bool(const CellSpec&)>& can_run = {});

    /// Counts for the user: brackets found (a group and threshold with one) in the last planned
    /// round's view, probe points among them.
    std::size_t brackets() const { return brackets_; }
    std::size_t probe_points() const { return probe_points_; }

private:
    struct Group {
        std::size_t block = 0;
        std::vector<std::int64_t> ns;  // ascending
        std::size_t base = 0;          // a grid cell of the group (for a probe's untuned spec)
        std::vector<double> thresholds, resolve;  // resolve: the thresholds the interval rule serves
        int probes = 3;
        std::int64_t seeds = 10, cap = 40, resolve_cap = 160;
        double width = 0.05;
        std::vector<std::string> parts;  // the task's slot parts (the report reads each on its own too)
        int resolve_probes = 0;              // crossing_resolve_probes (0: the interval rule adds seeds only)
        std::set<std::int64_t> read_probes;  // the reading probes planned so far (that rule's, with resolve_probes)
    };
    struct Point {
        std::map<std::uint64_t, CellScore> scores;  // by seed
        int source_round = 0;
        std::size_t source_index = 0;
    };
    CellSpec key_at(const Group& g, std::int64_t n) const;

    std::vector<CellSpec> grid_;       // as written, untuned
    std::vector<Group> groups_;        // in block order, then order of first appearance
    std::vector<std::vector<CellSpec>> round_keys_;  // per planned round: its cells' keys (untuned, with n and seed)
    std::map<CellSpec, Point, SameGroupOrder> points_;
    std::size_t brackets_ = 0, probe_points_ = 0;
};

}  // namespace memcap
