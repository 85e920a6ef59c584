// memcap/memories/theory/recall_model.hpp — a recall model as a backend's entry gives it.
//
// A backend whose reads a model of this folder describes declares it in its table entry
// (MemoryEntry::recall_model, memories/<name>/entry.cpp): given the memory's spec, its size
// from its one sizing function, its shape and the task's setting, the model that applies
// and how well (RecallModel). `memcap theory` (harness/results/theory_table.cpp) asks every
// summary row's entry and evaluates the calls through one ModelTable.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace memcap::theory {

/// One call of a model: the function's name and arguments (the key its value is kept
/// under) and the call. Every model is a pure function of its arguments.
struct ModelCall {
    std::string function;
    std::vector<double> args;
    std::function<double()> compute;
};

/// hrr_noisy_recall(n, D, σ) (hrr.hpp).
ModelCall hrr_call(std::int64_t n, std::int64_t D, double sigma);
/// grid_recall(n, d, σ) (crosstalk.hpp).
ModelCall grid_call(std::int64_t n, int d, double sigma);
/// cache_recall(n, d, β, σ) (crosstalk.hpp).
ModelCall cache_call(std::int64_t n, int d, double beta, double sigma);
/// least_squares_recall(n, d): the ridge read of n ≤ d random unit keys without query noise,
/// in the limit λ → 0, returns every stored value exactly (1); MesaNet's model.
ModelCall least_squares_call(std::int64_t n, int d);
/// keyset_grid_recall of n of a tight frame of `vocab` keys (keysets.hpp).
ModelCall frame_call(std::int64_t n, int d, std::int64_t vocab, double sigma);

/// The task's side of one assoc_recall read, as a summary row gives it.
struct RecallTask {
    std::string spec;         // the row's task spec string
    int d = 0;                // code width (keys and values)
    std::int64_t n = 0;       // stored pairs, and the candidates a read is scored among
    double noise_sigma = 0;   // query noise per entry at this d (0: none)
    std::string keys = "random";  // random, frame or learned
    std::int64_t vocab = 0;   // keys drawn from V symbols (0: fresh random keys)
};

/// What a backend's recall hook answers for one row.
struct RecallModel {
    std::string model;            // the function's name, e.g. "grid_recall"
    std::string applies = "no";   // exact, equivalent, approx or no
    std::string note;             // why it does not apply, or what it assumes
    std::optional<ModelCall> call;  // empty when applies = no
    /// The memory's dimensions the answer used, by the names of its MemorySize::dims,
    /// with the values it used (the conformance tests check them against the sizing function).
    std::vector<std::pair<std::string, std::int64_t>> sizes;
};

/// The answer for a key set the backend's model does not describe (keys=learned, and
/// keys=frame except for the grid), or none when `task.keys` is random or `frame_modelled`.
std::optional<RecallModel> keyset_not_modelled(const RecallTask& task, const std::string& model, bool frame_modelled);

/// Each model call computed once (they cost 0.01–1 s, and rows often share arguments).
/// While recording, value() only notes the call and returns NaN; evaluate() then computes
/// the noted calls on `threads` threads. Safe from several threads.
class ModelTable {
public:
    double value(const ModelCall& call);
    void record(bool on) { recording_ = on; }
    void evaluate(int threads);

private:
    using Key = std::pair<std::string, std::vector<double>>;
    std::mutex mutex_;
    std::map<Key, std::shared_future<double>> memo_;
    std::map<Key, std::function<double()>> pending_;
    bool recording_ = false;
};

/// body(i) for i in [0, count) on `threads` threads, in any order; the exception of the
/// lowest i that threw, if any, is rethrown after all have run.
void parallel_for(std::int64_t count, int threads, const std::function<void(std::size_t)>& body);

}  // namespace memcap::theory
