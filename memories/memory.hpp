// memcap/memories/memory.hpp — the interface every memory backend implements.
//
// A Memory stores (key, value) pairs written one at a time, in order, and
// answers reads with a value-sized vector. Keys and queries have dimension
// d_key, values and reads d_value (MemoryShape: the task's input description,
// core/inputs.hpp, plus the budget). Batches follow the layout of
// core/types.hpp: row i of `keys` is the i-th key.
//
// Required: reset, write, read, state_floats, state.
// Optional: write_batch / read_batch (default: a loop over write / read);
// override them when a batched form is faster, e.g. one GEMM for n writes.
// A batched write must leave exactly the state that n single writes leave,
// up to floating-point rounding.
//
// read_batch takes per-read options (ReadOptions). A backend honours the ones
// its table entry declares (memories/registry.hpp: can_hide_pairs for
// ReadOptions::hidden) and refuses the others with std::invalid_argument
// (require_no_hidden) — it never ignores one silently. The harness refuses such
// combinations up front from the declared traits, so the throw marks a bug.
//
// Optional, for memories whose table entry declares `backward`: backward(), the
// gradient of one episode's reads with respect to its keys and queries (training
// a key table through the memory, assoc_recall:keys=learned). It differentiates
// the memory's own write_batch and read_batch — it reads the state they left and
// re-derives what it needs from it — so there is one definition of each memory,
// never a second copy for training.
//
// The causal form (causal): the memory as a sequence layer. Given T tokens' queries,
// keys and values (rows of Q, K, V) and optional per-token gate inputs (TokenGates), it
// writes (k_t, v_t) under token t's gates and then reads with q_t, for t = 0..T−1 in
// order: o_t is read from the state *after* the write at t — flash-linear-attention's
// convention (its ops take q, k, v, g, beta and an initial state and return the outputs
// and the final state). It starts from the state the memory holds (reset() for a zero
// initial state) and leaves the final state in the memory. The default is the definition,
// token by token (causal_by_token): write (or write_gated) then read. A backend overrides
// causal with a faster form (the linear grid's chunked O = tril(φ(Q) φ(K)ᵀ) V) that equals
// the definition up to floating-point rounding; the conformance tests check that for every
// backend. An episode that is written, then read (write_batch, then read_batch) is the
// special case with reads only after the last write.
//
// Gate inputs a memory takes are declared in its table entry (MemoryEntry::gates); a gate
// input it does not take is refused with std::invalid_argument (write_gated), never
// ignored, and the harness refuses it up front from the declared traits.
//
// `state_floats()` counts the floats of state the memory holds now — what
// changes as it is written; it never exceeds the budget it was built with.
// Fixed parameters (projections, rotations, gates) are reported separately by
// `param_floats()`. `state()` is a flat view of exactly state_floats() floats.
#pragma once

#include "core/inputs.hpp"
#include "core/types.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace memcap {

/// The unit of a state budget: a float of 32 bits. A budget is a number of floats
/// (MemoryShape::budget_floats, the CSV's budget_floats); its bits are budget_bits of it
/// (a memory held at a lower precision spends them on more numbers, memories/precision.hpp),
/// and budgets given in bits are whole floats (budget_of_bits).
inline constexpr std::int64_t kBitsPerFloat = 32;
/// The largest budget a front door takes, in floats.
inline constexpr std::int64_t kMaxBudgetFloats = 4000000000LL;
/// The bits of a budget of `floats`.
inline std::int64_t budget_bits(std::int64_t floats) { return floats * kBitsPerFloat; }
/// The budget `bits` buy (a whole number of floats: bits / kBitsPerFloat, rounded down).
inline std::int64_t budget_of_bits(std::int64_t bits) { return bits / kBitsPerFloat; }
/// The smallest budget whose bits hold `bits` (rounded up).
inline std::int64_t budget_holding(std::int64_t bits) { return (bits + kBitsPerFloat - 1) / kBitsPerFloat; }
/// A budget in words: "1024 floats", and with `in_bits` "1024 floats (32768 bits)".
inline std::string describe_budget(std::int64_t floats, bool in_bits) {
    return std::to_string(floats) + " floats" + (in_bits ? " (" + std::to_string(budget_bits(floats)) + " bits)" : "");
}

/// What a backend is built for: the task's input description (dimensions, positional
/// keys, salience feature; core/inputs.hpp) and the budget.
struct MemoryShape : InputDescription {
    /// Floats of state the memory may hold; empty = the backend's natural size at d.
    std::optional<std::int64_t> budget_floats;

    MemoryShape() = default;
    /// Plain inputs of these dimensions (no positional keys, no salience feature).
    MemoryShape(int d_key, int d_value, std::optional<std::int64_t> budget = std::nullopt)
        : InputDescription{d_key, d_value, false, std::nullopt}, budget_floats(budget) {}
    MemoryShape(const InputDescription& inputs, std::optional<std::int64_t> budget)
        : InputDescription(inputs), budget_floats(budget) {}
};

/// A read-only view of a list of ints, e.g. of a std::vector<int> that outlives the
/// call it is passed to. Default: empty.
class IndexView {
public:
    IndexView() = default;
    IndexView(const std::vector<int>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT: implicit on purpose
    bool empty() const { return size_ == 0; }
    std::size_t size() const { return size_; }
    int operator[](std::size_t i) const { return data_[i]; }

private:
    const int* data_ = nullptr;
    std::size_t size_ = 0;
};

/// Options of one read_batch call. The default is a plain read.
struct ReadOptions {
    /// Structural mask: per query i, the pair written hidden[i]-th since reset
    /// (0-based) that its read may not attend to; a pair no longer held hides
    /// nothing. Empty: nothing hidden. Otherwise one entry per query. Honoured by
    /// backends declared can_hide_pairs (the softmax cache); refused by the rest.
    IndexView hidden;
};

/// Per-token gate inputs of a causal pass (Memory::causal), in the spirit of
/// flash-linear-attention's g and beta. Each is empty — absent: the memory's own setting at
/// every token — or has one row per token.
struct TokenGates {
    /// log a_t ≤ 0: the decay of the state at token t, applied with its write, replacing the
    /// memory's own decay (a_t = exp(log a_t); already the token's decay: not raised to the
    /// write gate's power). T × 1: one decay for every channel; T × c: a decay per channel
    /// (c = the memory's channels, d_φ for the grids), for families with per-channel decays.
    RowMat log_decay;
    /// β_t > 0: the write strength at token t (the delta rule's step), replacing the memory's.
    Vec beta;
    /// Δ_t ∈ [0, 1]: the write gate at token t, replacing the step the memory takes from the
    /// task's salience feature: it scales the write's strength and, without log_decay, is the
    /// power of the memory's own decay (a^Δ_t, Mamba's discretisation); Δ_t = 0 leaves the
    /// state exactly as it was (the token is skipped, its decay too).
    Vec write_gate;

    bool empty() const { return log_decay.size() == 0 && beta.size() == 0 && write_gate.size() == 0; }
};

/// The gradients of one causal pass (Memory::causal_backward): ∂L/∂ of each input, shaped as
/// the input (a gate input that was absent has an empty gradient).
struct CausalGrads {
    RowMat d_queries;    // T × d_key
    RowMat d_keys;       // T × d_key
    RowMat d_values;     // T × d_value
    RowMat d_log_decay;  // as TokenGates::log_decay
    Vec d_beta;          // as TokenGates::beta
    Vec d_write_gate;    // as TokenGates::write_gate
};

/// Which gate inputs a memory takes (its table entry's `gates`, memories/registry.hpp).
struct GateInputs {
    bool log_decay = false;      // TokenGates::log_decay with one column
    bool channel_decay = false;  // TokenGates::log_decay with one column per channel
    bool beta = false;           // TokenGates::beta
    bool write_gate = false;     // TokenGates::write_gate
    bool any() const { return log_decay || channel_decay || beta || write_gate; }
};

/// The gate inputs of one token (row t of a TokenGates), as Memory::write_gated takes them.
struct TokenGate {
    const float* log_decay = nullptr;  // decay_channels entries, or null: absent
    Eigen::Index decay_channels = 0;
    std::optional<float> beta;
    std::optional<float> write_gate;
};

/// Thrown by a write when the memory can no longer hold a meaningful state (an online
/// network whose weights became non-finite: its learning rate diverged). The readout turns
/// it into the cell's error row, naming the episode and what() — a measured failure, never
/// a crash. Not for bad input (that is UsageError, before any cell runs).
struct MemoryFailure : std::runtime_error {
    explicit MemoryFailure(const std::string& message) : std::runtime_error(message) {}
};

class Memory {
public:
    virtual ~Memory() = default;

    /// Forgets everything written; the memory is then equal to a freshly built one.
    virtual void reset() = 0;
    /// Stores one pair. key: d_key floats, value: d_value floats.
    virtual void write(ConstVecRef key, ConstVecRef value) = 0;
    /// Reads with `query` (d_key floats) into `out` (d_value floats).
    virtual void read(ConstVecRef query, VecRef out) const = 0;
    /// Floats of state held now (≤ the budget).
    virtual std::int64_t state_floats() const = 0;
    /// Flat view of the state, state_floats() floats long.
    virtual ConstStateView state() const = 0;

    /// Floats of fixed parameters (not state): projections, rotations, gates.
    virtual std::int64_t param_floats() const { return 0; }

    /// Writes row i of keys/values for i = 0..n-1, in order.
    virtual void write_batch(ConstMatRef keys, ConstMatRef values) {
        for (Eigen::Index i = 0; i < keys.rows(); ++i) write(keys.row(i).transpose(), values.row(i).transpose());
    }
    /// Reads every row of queries into the same row of out (queries.rows() × d_value),
    /// with `options` (see ReadOptions). An override repeats the default argument.
    /// Reads leave the state as it is, but one memory object is used by one thread at
    /// a time (memcap never shares one across threads): a read may fill caches kept in
    /// `mutable` members (HRR builds its maps' spectra on first use). A KV-cache policy scored
    /// by attention (its entry's reads_steer_writes) adds each read's weights to its pairs'
    /// scores, which are state: state() changes, what a read returns does not.
    virtual void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const {
        require_no_hidden(options);
        Vec tmp(out.cols());
        for (Eigen::Index i = 0; i < queries.rows(); ++i) {
            read(queries.row(i).transpose(), tmp);
            out.row(i) = tmp.transpose();
        }
    }

    /// Stores one pair under one token's gate inputs (see TokenGates; an absent one: the
    /// memory's own setting). The default refuses any gate input with std::invalid_argument
    /// (a memory whose table entry declares no gates); a backend that takes some refuses the
    /// others, and a per-channel decay of the wrong width, the same way — before it changes
    /// the state.
    virtual void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) {
        (void)key, (void)value, (void)gate;
        throw std::invalid_argument("this memory takes no per-token gate inputs (its table entry declares no gates)");
    }

    /// The causal form (see the header): for t = 0..T−1, writes (keys row t, values row t)
    /// under the gates of token t, then reads queries row t into out row t (T × d_value),
    /// starting from the state held and leaving the final state. `gates`: empty, or each of
    /// its parts empty or with T rows (std::invalid_argument otherwise). The default is
    /// causal_by_token; an override must equal it up to rounding.
    virtual void causal(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates, MatRef out) {
        causal_by_token(queries, keys, values, gates, out);
    }
    /// The causal form when causal_backward on the same inputs comes next (the trained layer's
    /// forward): causal()'s outputs, bit for bit, and the memory may keep what its backward
    /// would otherwise compute again (the grids keep each token's state). Default: causal().
    virtual void causal_for_backward(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates,
                                     MatRef out) {
        causal(queries, keys, values, gates, out);
    }
    /// The definition of the causal form, token by token: write (write_gated when `gates` is
    /// not empty), then read. What every causal override is tested against. `states`, when
    /// given: (T + 1) × state_floats() floats, the state before the first write and after each.
    void causal_by_token(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates, MatRef out,
                         float* states = nullptr) {
        require_causal_shapes(queries, keys, values, gates, out);
        const auto keep = [&](Eigen::Index i) {
            const ConstStateView s = state();
            std::copy(s.data(), s.data() + s.size(), states + i * s.size());
        };
        if (states) keep(0);
        Vec tmp(out.cols());
        for (Eigen::Index t = 0; t < keys.rows(); ++t) {
            if (gates.empty()) write(keys.row(t).transpose(), values.row(t).transpose());
            else write_gated(keys.row(t).transpose(), values.row(t).transpose(), token_gate(gates, t));
            if (states) keep(t + 1);
            read(queries.row(t).transpose(), tmp);
            out.row(t) = tmp.transpose();
        }
    }

    /// The gate inputs of token t of `gates`.
    static TokenGate token_gate(const TokenGates& gates, Eigen::Index t) {
        TokenGate g;
        if (gates.log_decay.size() > 0) g.log_decay = gates.log_decay.row(t).data(), g.decay_channels = gates.log_decay.cols();
        if (gates.beta.size() > 0) g.beta = gates.beta(t);
        if (gates.write_gate.size() > 0) g.write_gate = gates.write_gate(t);
        return g;
    }
    /// std::invalid_argument unless Q, K, V and `out` have one row per token, `out` is
    /// d_value wide, and every part of `gates` is empty or has one row per token.
    static void require_causal_shapes(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates,
                                      ConstMatRef out) {
        const Eigen::Index t = keys.rows();
        if (queries.rows() != t || values.rows() != t || out.rows() != t || out.cols() != values.cols())
            throw std::invalid_argument("causal: Q, K, V and the outputs must have one row per token (O as wide as V)");
        const auto bad = [t](Eigen::Index rows, Eigen::Index size) { return size > 0 && rows != t; };
        if (bad(gates.log_decay.rows(), gates.log_decay.size()) || bad(gates.beta.size(), gates.beta.size()) ||
            bad(gates.write_gate.size(), gates.write_gate.size()))
            throw std::invalid_argument("causal: a gate input must be absent or have one row per token");
    }

    /// The backward pass of one episode (memories declared `backward` in their table
    /// entry). Call it on the state that reset(); write_batch(keys, values) left, with the
    /// queries that read_batch(queries, reads) read (a plain read, nothing hidden).
    /// d_reads = ∂L/∂reads (queries.rows() × d_value) for any loss L of the reads; writes
    /// d_keys = ∂L/∂keys (keys.rows() × d_key) and d_queries = ∂L/∂queries (queries.rows()
    /// × d_key). Values are not differentiated (they are fresh codes, not learned). The
    /// default throws std::logic_error: the harness refuses training such a memory up front.
    virtual void backward(ConstMatRef keys, ConstMatRef values, ConstMatRef queries, ConstMatRef d_reads, MatRef d_keys,
                          MatRef d_queries) const {
        (void)keys, (void)values, (void)queries, (void)d_reads, (void)d_keys, (void)d_queries;
        throw std::logic_error("this memory has no backward pass (its table entry does not declare backward)");
    }

    /// The backward pass of the causal form (memories declared `causal_backward` in their table
    /// entry; the trained frame, harness/train/, trains only these). It resets the memory, runs
    /// the memory's own causal forward on (queries, keys, values, gates) from the zero state —
    /// its own write / write_gated and read, the steps causal_by_token takes, so there is one
    /// definition of each memory (a causal() override equals it up to rounding) — and, given
    /// d_out = ∂L/∂O (T × d_value) for any loss L of the outputs O, fills `grads`: ∂L/∂Q, ∂L/∂K,
    /// ∂L/∂V, and ∂L/∂ of each gate input that `gates` holds (the others left empty). The
    /// memory is left in the final state. The default throws std::logic_error: the harness
    /// refuses training such a memory up front, from the declared trait.
    virtual void causal_backward(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates,
                                 ConstMatRef d_out, CausalGrads& grads) {
        (void)queries, (void)keys, (void)values, (void)gates, (void)d_out, (void)grads;
        throw std::logic_error("this memory has no causal backward pass (its table entry does not declare causal_backward)");
    }

    /// Writable flat view of the state, the same floats as state(), for holding it at a storage
    /// precision (memories/precision.hpp rounds it in place after each write). A memory that
    /// gives it promises that state() is all it keeps of its writes (nothing derived from the
    /// state is cached beside it), so the rounded state is the memory stored at that precision.
    /// Default: an empty view (its table entry must then not declare `reduced_precision`).
    virtual StateRef mutable_state() { return StateRef(nullptr, 0); }

protected:
    /// For a read_batch that cannot hide pairs: throws std::invalid_argument when
    /// `options` asks it to, rather than read as if nothing were hidden.
    static void require_no_hidden(const ReadOptions& options) {
        if (!options.hidden.empty())
            throw std::invalid_argument("this memory cannot hide a written pair from a read (its table entry "
                                        "does not declare can_hide_pairs)");
    }
};

}  // namespace memcap
