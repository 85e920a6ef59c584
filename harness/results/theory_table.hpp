// memcap/harness/results/theory_table.hpp — the theory of memories/theory.hpp beside a summary CSV.
//
// `memcap theory` reads `memcap aggregate`'s summary (columns by name) and writes two tables:
//
// Predictions, one row per assoc_recall summary row (control=none) whose backend declares a
// recall model (MemoryEntry::recall_model: today the cache, the linear grid and HRR), which
// gives the model at the row's size (from the backend's sizing function), spec and task:
// the model's accuracy at the row's own setting, beside the
// measured mean and its standard error. Whether the model holds is said per row (`applies`):
//   exact       the memory is the model: HRR at its natural size (trace D = d, no maps),
//               the grid with d_φ = d (φ the identity), the cache holding all n pairs
//               (n ≤ B / 2d) at the row's β;
//   equivalent  the grid with d_φ > d and φ = proj: P has orthonormal columns, so
//               φ(k)·φ(q) = k·q and the read is the d × d grid's (up to rounding);
//   approx      HRR with query noise: theory::hrr_recall has no noise; the read of
//               q = ρ k + √(1 − ρ²) u is ρ (k ⋆ T) plus u ⋆ T, whose crosstalk, (n + 1)/D
//               on every score, is added to the model's variances (theory::wta_recall with
//               the target at ρ, ρ = 1/√(1 + σ²d), the task's cosine);
//   no          the model does not describe this memory; `note` says why (maps into a
//               trace D ≠ d, a Johnson–Lindenstrauss grid d_φ < d, an evicting cache, dpfp
//               features); model_accuracy_frac is empty.
// Query noise: `noise=σ` per entry, or `cosine=c`, σ = √((1/c² − 1)/d) at the row's d.
// chain_recall rows with cleanup=nearest are predicted too, one per hop (`slot`): the
// one-hop model at the row's setting compounded by theory::chain_cleanup_accuracy (hops
// fail independently, p_h ≈ p1^h); rows without cleanup, and assoc_recall rows with absent
// queries, are left out.
//
// Capacity lines (memories/theory/capacity.hpp), per model, noise setting (each one the
// summary's assoc_recall rows hold) and budget: n* (capacity_nstar), the real n where the
// model's accuracy at its best setting crosses `threshold` (the envelope over the settings
// below: the crossing of the one that holds out longest; nstar_kind = limit where that is
// the setting's largest n, the cache's B / 2d, still above the threshold), by TOMS 748 on
// log n inside the bracket of a first search: the largest n on the power-of-two grid
// 4, 8, 16, … whose model accuracy is at least `threshold` at the model's best width:
//   hrr     D = d = B (the natural size; the only width the model describes); n scanned
//           upward to the first miss (the report's rule for measured capacity);
//   linear  the square grid d × d, d a power of two with d² ≤ B (a larger d_φ reads the
//           same), from the largest such d down while a narrower one holds more (one call
//           at twice the best n decides); n by bisection up to d² (the model falls with n);
//   softmax d in {4, …, 64} (powers of two), β in {4, 8, …, 128}, n ≤ B / 2d (beyond,
//           the FIFO cache has evicted at least half the pairs: below 0.9 whatever the
//           read). Cache calls are expensive (0.1–0.4 s), so only the summary's budgets
//           (never the extension), bisection over n per d, β by climbing from the last
//           β that passed (taking accuracy as unimodal in β; the line's β is the first
//           found to pass, not necessarily the best), widths stopped once B / 2d is no
//           more than the best n, and every call memoised across rows and budgets.
// HRR and the grid are also given at every power of two from above the summary's largest
// budget up to `max_budget`. Several summaries read in one call share their model calls, and
// their capacity lines are those of the union of their budgets and noise settings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memcap {

struct TheoryOptions {
    std::vector<std::string> summary_paths;  // `memcap aggregate` outputs: one or more
    std::int64_t max_budget = 1 << 20;   // HRR and grid capacity lines up to this many floats
    double threshold = 0.9;              // capacity: model accuracy at least this
    int threads = 1;                     // the per-row model calls run on this many threads
    bool lines = true;                   // search the capacity lines (most of the time); false: capacity_csv is empty
};

struct TheoryTables {
    std::vector<std::string> predictions_csv;  // per summary, in order: one row per covered row
    std::string capacity_csv;     // one row per model, noise setting and budget of all the summaries
    std::size_t capacity_lines = 0;  // its rows: none when no covered row has a budget
};

/// Both tables as CSV text; UsageError for an unreadable or foreign summary. Several summaries
/// share their model calls (each made once) and their capacity lines (over the union of their
/// budgets and noise settings); each summary's predictions are those it gives alone.
TheoryTables theory_tables(const TheoryOptions& options);

}  // namespace memcap
