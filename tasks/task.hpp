// memcap/tasks/task.hpp — the interface every task implements.
//
// A task generates episodes; a readout (harness/eval/readout.hpp) drives a memory
// through them and scores it. An episode is: n pairs written in order, then
// queries, each answered by one read and scored against a candidate set — the
// read is correct when its nearest candidate (Euclidean) is the target.
//
//     keys/values  (n × d_key, n × d_value)   written row by row
//     queries      (m × d_key)                one read each
//     candidates   (c × d_value)              the answer set
//     target[i]    row of candidates that query i should retrieve; −1: the query
//                  asks for a key never written (tasks with absent queries, where
//                  the readout must also decide that nothing fits)
//     slot[i]      lag / position of query i (−1 when the task has no slots)
//
// A chained task (hops() = h > 1) reads h rounds: the m queries are asked, each
// read becomes the next round's query (Task::next_queries), and so on; target
// and slot then hold h·m entries, round r's in rows r·m … r·m + m − 1.
//
// Episode data depends only on (task spec, n, d, seed, split, index) — never
// on the memory — so every memory sees the same episodes (paired comparison).
// A Task object belongs to one cell and one thread: it may cache what every
// episode of a cell shares (vocabulary and position codes).
#pragma once

#include "core/inputs.hpp"
#include "core/spec.hpp"
#include "core/types.hpp"
#include "tasks/spectral_codes.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memcap {

/// One task cell: the task's size n, vector dimension d and replicate seed.
struct TaskCell {
    std::int64_t n = 0;
    int d = 64;
    std::uint64_t seed = 0;
};

/// Training the keys' embedding table through a memory (assoc_recall:keys=learned;
/// harness/eval/key_training.hpp): the table's size and the optimiser's settings.
struct KeyTraining {
    std::int64_t vocab = 0;     // rows of the table (symbols)
    std::int64_t steps = 0;     // Adam steps; step t reads training episode t
    double lr = 0.0;            // Adam's learning rate
    double temperature = 1.0;   // of the cross-entropy over the candidates
};

/// Test episodes are scored; train episodes are only for fitting a readout (probe).
enum class Split { Test = 0, Train = 1 };

struct Episode {
    RowMat keys, values;
    RowMat queries;
    RowMat candidates;
    std::vector<int> target;
    std::vector<int> slot;
    /// Structural mask (the control assoc_recall:control=structural_mask): per query, the
    /// written pair (row of keys and values) its read may not attend to. Empty when the
    /// task hides nothing; see Task::hides_pairs. The readout hands it to the memory's
    /// read_batch as ReadOptions::hidden.
    std::vector<int> hidden;
    /// For a task read as its stream is written (mqar): per query, the write (row of keys and
    /// values) whose causal read answers it. keys, values and queries then have one row per
    /// written token (queries row t: the query read after the write of row t), and the readout
    /// runs the memory's causal form (Memory::causal) over them and scores its rows read_at[i].
    /// Empty for every task that writes, then reads.
    std::vector<int> read_at;
    /// For a task whose stream is a sequence of vocabulary symbols (mqar; Task::token_vocab > 0):
    /// the symbol of every token, in order (tokens 0 .. T − 1; the query read at read_at[i] is
    /// token read_at[i] + 1). What the trained frame (harness/train/) embeds; the untrained
    /// readout never reads it. Empty for every other task.
    std::vector<int> tokens;
    /// For tasks whose keys are embeddings of vocabulary symbols (assoc_recall:vocab=V):
    /// the symbol of each written key (row i of keys is the table's row key_symbol[i],
    /// normalised), and the length of each query before it was normalised (query i is
    /// unit(key of target i + noise)): what training the embedding needs to carry a
    /// gradient back to the table. Empty for tasks without a vocabulary.
    std::vector<int> key_symbol;
    std::vector<float> query_norm;
    /// For tasks whose keys, queries, candidates and slots are fixed per cell: a number
    /// naming the fixed parts these buffers hold (unique per draw of the codes, 0 =
    /// none), so the next episode of the cell rewrites only values and targets. An
    /// Episode handed back to fill_episode must not have been modified.
    std::uint64_t fixed_parts = 0;
    /// The tie rule (0: none, every task but overwrite_recall): a read r is right only when
    /// ‖r − c_j‖² − ‖r − c_t‖² > tie_tolerance · ‖c_j − c_t‖² for every other candidate c_j
    /// (c_t its target). For a read between two candidates, r = w c_t + (1 − w) c_j, the left
    /// side is (2w − 1) ‖c_j − c_t‖²: the read must put more than (1 + τ)/2 of its weight on
    /// the target. For tasks whose exact answer can sit midway between the right candidate
    /// and a wrong one (a cache reading two copies of one key, an additive memory's sum),
    /// where rounding — amplified by a sharp softmax — would otherwise decide. The margin is
    /// in squared distance, so it is not scale-free: a read α·c_t pointing exactly at its target
    /// passes only when α > τ (for unit candidates); reads that small are crosstalk long before.
    float tie_tolerance = 0.0f;
};

/// A fresh, process-wide unique Episode::fixed_parts tag (never 0).
std::uint64_t new_fixed_parts_tag();

class Task {
public:
    explicit Task(Spec spec) : spec_(std::move(spec)) {}
    virtual ~Task() = default;

    const Spec& spec() const { return spec_; }
    /// What this task feeds a memory at `cell` (core/inputs.hpp): the dimensions, whether
    /// the keys only mark positions, and the value coordinate that marks a token's class.
    /// The harness builds the memory for it (with the budget); the default is d-dimensional
    /// content keys and values without a salience feature.
    virtual InputDescription inputs(const TaskCell& cell) const { return {cell.d, cell.d, false, std::nullopt}; }
    /// Scored episodes per seed.
    virtual std::int64_t test_episodes(const TaskCell&) const { return 1; }
    /// True when queries carry a slot (lag, position) and rows are reported per slot.
    virtual bool has_slots() const { return false; }
    /// True when episodes carry Episode::hidden: every read must skip one written pair,
    /// which only memories that keep pairs apart can do (declared can_hide_pairs).
    virtual bool hides_pairs() const { return false; }
    /// Rounds of reads per episode (chained lookups): 1 for every one-shot task.
    virtual int hops() const { return 1; }
    /// The next round's queries from this round's reads (`reads`: m × d_value) for a
    /// chained task; the default (one-shot tasks) is never called.
    virtual void next_queries(const Episode& episode, ConstMatRef reads, RowMat& queries) const;
    /// True when some queries ask for keys never written (Episode::target = −1): the
    /// readout records a decision statistic per query (CellOutcome::decisions).
    virtual bool has_absent() const { return false; }
    /// Why only the memory's own read can score this task, beyond chained reads and absent
    /// queries; empty when the probe can. The probe (harness/eval/probe.hpp) fits one answer per
    /// slot from the state alone when a task has slots, so a task whose slot does not fix the
    /// answer (a lag bucket of many lags, "a rewritten key") says so here.
    virtual std::string native_read_reason() const { return {}; }
    /// True when only the memory's own read can score the task (chained reads, absent
    /// queries, native_read_reason): the probe and memories without a native read are refused up front.
    bool needs_native_read() const { return hops() > 1 || has_absent() || !native_read_reason().empty(); }
    /// For a task whose episodes carry Episode::tokens (a stream of vocabulary symbols, mqar):
    /// the vocabulary's size; its candidates are the embeddings of the last
    /// Episode::candidates.rows() symbols (the value symbols). 0 for every other task.
    virtual std::int64_t token_vocab() const { return 0; }
    /// Accuracy of guessing uniformly among the candidates.
    virtual double chance(const TaskCell& cell) const = 0;

    /// Episode `index` of `split` described by its code streams rather than materialised, for
    /// a cell whose codes are drawn in the Fourier domain and whose episode is a plain
    /// associative recall (tasks/spectral_codes.hpp): the native readout hands a memory that
    /// takes spectra (the registry's takes_spectra) its codes a block at a time. The
    /// materialised episode of the same cell holds the same codes. Empty for every other cell.
    virtual std::optional<SpectralEpisode> spectral_episode(const TaskCell&, Split, std::int64_t) const { return std::nullopt; }

    /// The settings of training this task's key table, for a task whose keys are learned
    /// (assoc_recall:keys=learned); empty otherwise. Such a task's episodes depend on the
    /// table installed (set_key_table), so they are never shared between cells.
    virtual std::optional<KeyTraining> key_training() const { return std::nullopt; }
    /// The table a learned task starts from at `cell` (vocab × d; keys are its rows
    /// normalised). Only for a task with key_training(); the default throws std::logic_error.
    virtual RowMat initial_key_table(const TaskCell& cell) const;
    /// Installs the table the keys of `cell`'s episodes come from from now on (vocab × d;
    /// its rows are normalised in the forward pass). Only for a task with key_training().
    virtual void set_key_table(const TaskCell& cell, const RowMat& table);

    /// Refuses, before any work, a cell this task cannot run: throws UsageError with one
    /// line naming the task, the key and the value (e.g. selective_copying's content
    /// longer than the stream). Every task: n ≥ 1, d ≥ 1, n within an int (targets and
    /// slots are ints); then the task's own check_cell. A cell that passes never makes
    /// fill_episode throw.
    void check(const TaskCell& cell) const;
    /// Estimated peak bytes of the task's side of a cell: one episode (keys, values,
    /// queries, candidates, targets), the codes it keeps per cell and the temporaries of
    /// filling an episode. The memory's side is memory_peak_bytes (memories/registry.hpp);
    /// the readout's (the probe's design) is the harness's.
    virtual std::int64_t peak_bytes(const TaskCell& cell) const = 0;
    /// Queries (rows of Episode::queries) of every episode of `cell`: the `reads` of
    /// memory_peak_bytes, as writes_per_episode is its `writes`.
    virtual std::int64_t queries_per_episode(const TaskCell& cell) const = 0;
    /// Pairs written per episode of `cell` (rows of Episode::keys): n for most tasks; more
    /// where n counts only some of them (a window of a longer stream, pairs among
    /// distractors, a context written several times). The cost model and the memory
    /// estimate price the writes and the candidates by it.
    virtual std::int64_t writes_per_episode(const TaskCell& cell) const { return cell.n; }

    /// Writes episode `index` of `split` for `cell` into `out`, every field overwritten.
    /// Readouts pass the same Episode again and again, so its buffers are reused
    /// (no allocation per episode once the shapes are known). Checks the cell first
    /// (check), so a cell the harness did not check is refused here rather than filled.
    void fill_episode(const TaskCell& cell, Split split, std::int64_t index, Episode& out) const {
        check(cell);
        const std::uint64_t held = out.fixed_parts;
        out.fixed_parts = 0;  // only a task that keeps fixed parts sets it again
        out.hidden.clear();   // only a task that hides pairs fills it
        out.read_at.clear();  // only a task read as it is written fills it
        out.tokens.clear();   // only a task of vocabulary symbols fills it
        out.tie_tolerance = 0.0f;  // only a task with a tie rule sets it
        out.key_symbol.clear();    // only a task with a vocabulary fills these two
        out.query_norm.clear();
        fill(cell, split, index, held, out);
    }
    /// Episode `index` of `split` for `cell`, as a new object.
    Episode episode(const TaskCell& cell, Split split, std::int64_t index) const {
        Episode e;
        fill_episode(cell, split, index, e);
        return e;
    }

protected:
    /// The task's own checks (see check); the default has none.
    virtual void check_cell(const TaskCell&) const {}
    /// The per-entry query noise σ at width d given as `noise` (σ itself) or as `cosine` (the
    /// expected query–key cosine c < 1: σ = √((1/c² − 1)/d), the same at every width).
    static double query_sigma(double noise, double cosine, int d);
    /// Refuses noise > 0 together with cosine < 1 (both set the query noise), naming both.
    void refuse_two_noises(double noise, double cosine) const;
    /// `floats` floats and `ints` ints in bytes, saturated at INT64_MAX (for peak_bytes).
    static std::int64_t bytes_of(double floats, double ints = 0.0);
    /// Floats of the readout's copy of `rows` candidates of width d, transposed for its
    /// scoring kernel (harness/eval/nearest.hpp): the copy and the norms, with the padding
    /// to a multiple of 16 candidates (for peak_bytes).
    static double scoring_panel_floats(double rows, double d) { return (rows + 16.0) * (d + 1.0); }
    /// UsageError "task '<spec>': <key>=<value> <why>" (check_cell's one line).
    [[noreturn]] void refuse(const std::string& key, const std::string& value, const std::string& why) const;
    /// Refuses a cell whose `count` candidate codes (`what`, e.g. "n=4 values") are random
    /// unit vectors in d − `reserved` coordinates that cannot be told apart: in one
    /// dimension every unit vector is +1 or −1, so two of `count` ≥ 2 codes coincide
    /// (surely for ≥ 3), and a read of the later copy is scored against the earlier one
    /// (ties go to the lower index): a perfect read would count as wrong. In two or more
    /// dimensions random unit codes differ with probability 1.
    void require_distinct_codes(const TaskCell& cell, const std::string& what, std::int64_t count, int reserved) const;

    /// Implements fill_episode. `held` is the Episode::fixed_parts tag `out` came in
    /// with (`out.fixed_parts` is already 0): a task whose keys, queries, candidates and
    /// slots are fixed per cell may leave them as they are when `held` names its
    /// current codes, and then sets `out.fixed_parts` to that tag again.
    /// Required of every task: the episode depends only on (the task's spec, cell.n,
    /// cell.d, cell.seed, split, index) — never on the memory or anything else — so
    /// cells that differ only in the memory may share it (the native readout reuses
    /// the last test episode a thread filled when the next cell names the same one).
    virtual void fill(const TaskCell& cell, Split split, std::int64_t index, std::uint64_t held, Episode& out) const = 0;

private:
    Spec spec_;
};

}  // namespace memcap
