// memcap/harness/train/trainer.hpp — training a Layer (layer.hpp) around a memory, and scoring it.
//
// The trained frame: a memory given as `<memory>:train=layer` is the memory inside a trained
// layer (layer.hpp); `train=none` (or leaving it out) is the untrained frame, unchanged. The
// memory is built exactly as untrained — the same spec, shape, budget and seed, so its state is
// the size the budget buys — and the layer's parameters are its param_floats, never state.
//
// What a model is: one per (memory spec, budget, width d, task spec, seed) — the task without
// n. As zoology does, it is trained once on a mix of n and then scored at every n of the cell
// list: cells that differ only in n share it (a process-wide cache keyed on exactly that; the
// model depends on nothing else, so it is the same whichever cell trains it first, at any thread
// count).
//
// Training, for one learning rate:
//   episodes   training episodes of the cell's seed (Split::Train), step s reads episodes
//              s·B .. s·B + B − 1, B = 16; episode i is drawn at n = mix[i mod |mix|], the mix
//              being the powers of two from 4 (or 1 when the task holds fewer) to the largest n the
//              task can pose (mqar: n ≤ length/4 and 2n + 2 ≤ vocab)
//   loss       the mean over the batch of each episode's mean cross-entropy at its query tokens
//              (logits over the value symbols; at initialisation ln(values): the plateau)
//   optimiser  Adam (β1 = 0.9, β2 = 0.999, ε = 1e-8, bias-corrected), the gradient clipped to
//              global norm 1, learning rate warmed up linearly over the first 100 steps, then
//              constant (early stopping, below, ends training, so no decay schedule is assumed)
//   held out   every 50 steps the mean loss on 64 held-out episodes (Split::Train at indices
//              from 2^40, disjoint from the training indices; never the scored Test episodes) is
//              taken; once it has left the plateau (below ln(values) − 1 nat), training stops when
//              it has not improved for 10 evaluations (500 steps): converged; or at the cap
//              (train_steps, default 3000): not converged. A model still on the plateau is never
//              stopped early (its loss barely moves before it leaves). The model kept is the one at
//              the best held-out evaluation.
//   learning rate  train_lr given: that one; left out: each of 1e-3, 3e-3 and 1e-2 is trained on the
//              first tuning seed (kTuningSeedBase: never a scored seed) and the one whose run reaches
//              the lowest held-out loss there is the rate of every seed's model (ties: the first) —
//              chosen on tuning seeds like any setting; each (group, seed, rate) run is trained once.
// A non-finite loss or gradient ends that learning rate's run as failed; a model whose every
// run failed makes its cells error rows naming it.
//
// Scoring: a cell's Test episodes (the untrained readout's), each run through the trained
// layer; a query is right when the largest logit is its answer (ties: the lower symbol).
#pragma once

#include "core/spec.hpp"
#include "harness/results/cell_result.hpp"
#include "harness/train/layer.hpp"
#include "memories/registry.hpp"
#include "tasks/task.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace memcap::train {

/// True when `memory` asks for the trained frame (train=layer).
bool trained(const Spec& memory);

/// The fixed settings (see the header) and the ones the spec gives.
struct TrainSettings {
    std::vector<double> lrs{1e-3, 3e-3, 1e-2};
    std::int64_t max_steps = 3000;
    int batch = 16;
    int eval_every = 50;
    int patience = 10;
    int heldout = 64;
    int warmup = 100;
    double clip = 1.0;
    static TrainSettings of(const Spec& memory);
};

/// One point of a training curve: after `step` steps, the mean training loss of the steps since
/// the last point, the held-out loss and the held-out accuracy (queries right).
struct CurvePoint {
    std::int64_t step = 0;
    double train_loss = 0, heldout_loss = 0, heldout_accuracy = 0;
};

/// One learning rate's run.
struct TrainRun {
    double lr = 0;
    bool ok = true;
    std::string message;
    bool converged = false;
    std::int64_t steps = 0;      // steps taken
    std::int64_t best_step = 0;  // the step of the model kept
    double best_loss = 0;        // its held-out loss
    std::int64_t left_plateau = -1;  // first evaluation whose held-out loss is below ln(values) − 1 nat; −1: never
    double plateau = 0;          // ln(values)
    std::vector<CurvePoint> curve;
    std::vector<float> theta;    // the parameters kept
};

/// A trained model: the layer and the run it keeps (one run: at the learning rate given, or the
/// one the tuning seed chose).
struct TrainedModel {
    std::unique_ptr<Layer> layer;
    std::vector<TrainRun> runs;
    int chosen = -1;  // index into runs; −1: the run failed (its message says why)
    bool tuned = false;  // the learning rate was chosen on the tuning seed
    std::vector<std::int64_t> mix;
    bool ok() const { return chosen >= 0; }
    const TrainRun& run() const { return runs[static_cast<std::size_t>(chosen)]; }
    /// The CSV's message for a scored cell: "trained: lr=0.003 converged step=850 heldout_loss=0.41 ...".
    std::string summary() const;
};

/// One episode as the layer reads it: a token stream (tokens; the scored tokens at read_at + 1)
/// or, for a vector task, one write token [k; v] per pair, then one read token [q; 0] per query
/// (inputs, n + m rows; the scored tokens n .. n + m − 1), with the answers and, for a vector
/// task, the candidates.
struct Sequence {
    std::vector<int> tokens;
    RowMat inputs;
    std::vector<int> positions, targets;
    RowMat candidates;  // vector tasks: the episode's candidates (c × d_value)
};
void to_sequence(const Episode& e, Sequence& s);
/// The temperature of a vector task's softmax over −‖y − c_j‖² / τ (the output projection learns the scale).
inline constexpr double kCandidateTemperature = 1.0;
/// The mean cross-entropy of one sequence's pass at its scored tokens — token tasks: logits U y over
/// the value symbols; vector tasks: softmax_j(−‖y − c_j‖²/τ) over the candidates — adding the queries
/// right (largest logit on the answer; ties: the lower index) to `correct`, and with `dy`: ∂(scale ·
/// loss)/∂Y into dy (overwritten) and ∂/∂head added into grad.
double sequence_loss(const Layer& layer, const LayerPass& pass, const Sequence& s, double scale, std::int64_t& correct,
                     RowMat* dy, std::vector<float>* grad);

/// The layer's shape and recipe for the memory `spec` (its entry) at `shape` on `task`.
struct LayerPlan {
    LayerShape shape;
    LayerRecipe recipe;
};
LayerPlan plan_layer(const MemoryEntry& entry, const Spec& spec, const MemorySize& size, const MemoryShape& shape,
                     const Task& task);

/// UsageError (one line) when the memory `spec` cannot be trained on `task`: the memory does
/// not declare causal_backward, its state is not fp32, it is split into heads, or the task is
/// neither a stream of vocabulary symbols nor a one-shot vector task that writes, then reads (no
/// chains, absent queries, hidden pairs, learned keys or slots).
void check_trainable(const MemoryEntry& entry, const Spec& spec, const Task& task);

/// One learning rate's run for (memory spec, budget, d, task spec, seed) — not cached.
TrainRun train_run(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                   const Task& task, int d, std::uint64_t seed, double lr);
/// The learning rate of (memory spec, budget, d, task spec): `train_lr` when the spec gives it;
/// otherwise the rate whose run on the first tuning seed (kTuningSeedBase, harness/exec/tuning.hpp:
/// no scored seed) reaches the lowest held-out loss (ties: the first), each run cached. None when
/// every rate failed there (`why` says how).
std::optional<double> tuned_lr(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                               const Task& task, int d, std::string* why = nullptr);
/// The model of (memory spec, budget, d, task spec, seed): the run at tuned_lr on that seed — not
/// cached (its runs are).
TrainedModel train_model(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                         const Task& task, int d, std::uint64_t seed);
/// The model of that key from the process-wide cache, trained on first use (any thread; a
/// second thread asking for it waits for the first).
std::shared_ptr<const TrainedModel> cached_model(const MemoryEntry& entry, const MemorySize& size, const Spec& spec,
                                                 const MemoryShape& shape, const Task& task, int d, std::uint64_t seed);

/// A model a cell needs, with what training it takes (the cell's resolution).
struct ModelRequest {
    const MemoryEntry* entry = nullptr;
    MemorySize size;
    Spec memory, task;
    MemoryShape shape;
    int d = 0;
    std::uint64_t seed = 0;
};
/// Trains, `threads` at once, every run the requests need — first every tuned group's runs on
/// the tuning seed (one per rate), then every request's model — so that the cells, which run
/// several n of one model on whichever thread, find them cached instead of waiting on one another.
/// The same runs as the cells would train (the same bits: each run depends on its key only). No
/// run starts once `stop` is set; a run that throws is left for its cells to report. `begin(runs)`
/// is called first with the number of runs (a progress bar's total), `done_one` after each (from
/// any thread, one at a time or not: the caller's bar locks).
void prepare(const std::vector<ModelRequest>& requests, int threads, const std::atomic<bool>& stop,
             const std::function<void(std::size_t runs)>& begin = {}, const std::function<void()>& done_one = {});

/// Scores `cell` through the trained model (its Test episodes); an error outcome when training failed.
CellOutcome score_trained(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                          const Task& task, const TaskCell& cell);

/// Every run trained so far in this process, as CSV rows of its curve (header first), in the order
/// of their keys (group, seed, rate): key, lr, chosen (1: a model keeps the run — the tuning seed's
/// chosen rate, every scored seed's run), step, train_loss, heldout_loss, heldout_accuracy.
std::string curves_csv();

}  // namespace memcap::train
