// memcap/harness/eval/readout.hpp — the table of readouts: how a memory is scored on a task.
//
// Readouts are named by spec strings like memories and tasks:
//   native                       the memory's own read: for each scored episode,
//                                reset, write every pair in order (write_batch),
//                                answer every query with read_batch; a query is
//                                correct when the read's nearest candidate is its target
//                                (a chained task reads again with what each read gives,
//                                Task::next_queries, scoring every round). An episode
//                                whose codes are drawn in the Fourier domain, read by a
//                                memory that takes spectra (HRR at D = d), is streamed
//                                instead of materialised (score_spectral_episode);
//   probe:train=2000,ridge=1e-06 a least-squares map from the state (probe.hpp);
//   magnitude:radius=0.5         the native read, scored so that its scale counts: a
//                                query is right when its nearest candidate is its target
//                                *and* the read lies within radius × ‖target‖ of the
//                                target (‖r − c_t‖ < radius ‖c_t‖). The nearest-candidate
//                                rule alone is blind to a read's scale when the candidates
//                                have equal norms (argmin ‖r − c_j‖ = argmax r·c_j), so a
//                                normaliser (mLSTM's max(|nᵀq|, 1)), a decay that shrinks
//                                old pairs, or crosstalk that inflates a read changes the
//                                native score only through direction; this one sees it.
//                                radius = inf is the native readout;
//   auto (default)               native where the backend has a meaningful read
//                                (its table entry's `native_read`), the probe otherwise.
// `auto` is resolved once, when a grid's cells are made (resolve_readout); a
// cell always carries the readout it is scored with. Scores are kept per slot
// (one entry with slot −1 for slot-free tasks).
#pragma once

#include "core/spec.hpp"
#include "harness/results/cell_result.hpp"
#include "memories/memory.hpp"
#include "memories/spectral_memory.hpp"
#include "tasks/task.hpp"

#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace memcap {

struct CandidatePanel;  // harness/eval/nearest.hpp

struct ReadoutEntry {
    std::string name;
    std::string description;  // one line, for `memcap list`
    std::vector<ParamInfo> params;
    /// Scores `memory` on the task's test episodes for `cell`; empty for `auto`, which resolves to another.
    std::function<CellOutcome(Memory&, const Task&, const TaskCell&, const Spec& readout)> score;
    /// True when the readout reads through the memory's own read (which can hide a pair).
    bool uses_native_read = false;

    Schema schema() const { return {"readout", name, params}; }
};

/// Every readout, in `memcap list` order.
const std::vector<ReadoutEntry>& readout_registry();
/// The entry called `name`; UsageError listing the known readouts otherwise.
const ReadoutEntry& find_readout(const std::string& name);
/// Parses and binds a readout spec string (UsageError listing the known readouts).
Spec parse_readout_spec(const std::string& text);
/// The readout actually used for `memory_name`: `auto` becomes native or probe (with auto's values).
Spec resolve_readout(const Spec& readout, const std::string& memory_name);

/// Scores `memory` on the task's test episodes for `cell` by its own read.
/// A non-finite read makes the outcome an error (never a silent NaN).
/// `radius` (finite: the magnitude readout) also requires ‖read − target‖ < radius ‖target‖.
CellOutcome native_readout(Memory& memory, const Task& task, const TaskCell& cell,
                           double radius = std::numeric_limits<double>::infinity());

/// Scores one episode given by its code streams (Task::spectral_episode) through a memory
/// that takes spectra, a code at a time: the pairs are written as drawn; the reads'
/// spectra are compared with every candidate a range of bins at a time by Parseval,
/// r·v = (1/d) Σ_b w_b Re(R_b conj(V_b)), so neither the episode nor a time-domain code
/// is ever held. The nearest candidate is the one with the largest r·v (candidates are
/// unit codes; ties to the lower index), as score_reads decides. False (and `by_slot`
/// untouched) when a read is not finite.
/// `radius`: as native_readout's (the codes are unit: ‖read − target‖ < radius).
bool score_spectral_episode(SpectralMemory& memory, const SpectralEpisode& episode, std::vector<SlotScore>& by_slot,
                            double radius = std::numeric_limits<double>::infinity());
/// Estimated peak bytes of score_spectral_episode's buffers for `queries` reads of n pairs of
/// width d (the task's side of a streamed cell; the memory's is memory_peak_bytes).
double spectral_episode_peak_bytes(std::int64_t n, int d, std::int64_t queries);

/// Adds one episode's reads into per-slot scores (index = slot + 1): read i answers the
/// query whose target and slot are entry `first + i` of the episode's (a chained task's
/// later rounds start further in). A query whose target is −1 (a key never written) is
/// not scored; when `decisions` is given, every query adds its decision statistic there
/// (the read's dot product with its nearest candidate). `panel`, when given, holds the
/// episode's candidates as the scoring kernel takes them (harness/eval/nearest.hpp), made
/// once for an episode read by several memories; otherwise it is made here. A finite `radius`
/// (the magnitude readout) makes a read right only when also ‖read − target‖ < radius ‖target‖.
void score_reads(const Episode& episode, ConstMatRef reads, std::vector<SlotScore>& by_slot, std::size_t first = 0,
                 std::vector<Decision>* decisions = nullptr, const CandidatePanel* panel = nullptr,
                 double radius = std::numeric_limits<double>::infinity());

}  // namespace memcap
