// memcap/memories/hybrid/hybrid.cpp — see hybrid.hpp.
#include "memories/hybrid/hybrid.hpp"

#include "core/error.hpp"
#include "memories/softmax/softmax_cache.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace memcap {

namespace {

using I = std::int64_t;

/// The keys the hybrid declares itself; every other key of its spec is the state memory's.
const std::set<std::string>& own_keys() {
    static const std::set<std::string> keys = {"share", "state", "window_beta", "slot", "precision", "heads"};
    return keys;
}

/// The two parts of a hybrid at one shape: their specs (absent: the part is not there), shapes
/// and sizes, and the hybrid's minimum budget.
struct Parts {
    std::optional<Spec> window, state;
    MemoryShape window_shape, state_shape;
    MemorySize window_size, state_size;
    I min_budget = 1;
    bool fits = true;  // false: the budget is below min_budget (the sizes are then not built)
};

std::string window_text(const Spec& spec) {
    std::string text = "softmax:beta=" + format_real(spec.real("window_beta"));
    if (spec.has("slot")) text += ",null=" + format_real(spec.real("slot"));
    return text;
}

std::string state_text(const Spec& spec) { return inner_memory_text(spec, "hybrid", "state", own_keys()); }

Spec part_spec(const Spec& spec, const std::string& text) {
    try {
        return parse_memory_spec(text);
    } catch (const UsageError& e) {
        throw UsageError("memory '" + spec.canonical() + "': its part '" + text + "': " + e.what());
    }
}

/// Pairs the window holds at a budget of `budget` floats (its rows, the slot's included).
I window_rows(double share, I budget, I row) { return static_cast<I>(std::floor(share * double(budget) / double(row))); }

Parts parts(const Spec& spec, const MemoryShape& shape) {
    Parts p;
    const double share = spec.real("share");
    const Spec window = part_spec(spec, window_text(spec)), state = part_spec(spec, state_text(spec));
    const MemoryEntry& window_entry = find_memory("softmax");
    const MemoryEntry& state_entry = find_memory(state.name());
    if (share > 0.0) p.window = window;
    if (share < 1.0) p.state = state;
    p.window_shape = p.state_shape = shape;
    const I row = I{shape.d_key} + shape.d_value;
    const I least_rows = spec.has("slot") ? 2 : 1;  // one pair, and the slot's row
    const I state_min = state_entry.min_budget(state, shape);
    // Whether a budget gives both parts their minimum.
    const auto fits_both = [&](I b) {
        const I rows = window_rows(share, b, row);
        return rows >= least_rows && b - rows * row >= state_min;
    };
    if (!p.window) p.min_budget = state_min;
    else if (!p.state) p.min_budget = window_entry.min_budget(window, shape);
    else {
        // Every budget from b0 up fits: the window's rows reach least_rows once share b ≥
        // least_rows · row, and the state keeps at least (1 − share) b ≥ state_min. Below b0 the
        // minimum is the least budget from which every larger one fits.
        I b0 = std::max<I>(static_cast<I>(std::ceil(double(least_rows * row) / share)),
                           static_cast<I>(std::ceil(double(state_min) / (1.0 - share))));
        while (!fits_both(b0)) ++b0;  // rounding of the ceilings
        while (b0 > 1 && fits_both(b0 - 1)) --b0;
        p.min_budget = b0;
    }
    if (shape.budget_floats) {
        const I b = *shape.budget_floats;
        if (b < p.min_budget) {
            p.fits = false;
            return p;
        }
        if (p.window && p.state) {
            const I rows = window_rows(share, b, row);
            p.window_shape.budget_floats = rows * row;
            p.state_shape.budget_floats = b - rows * row;
        }
    }
    if (p.window) p.window_size = window_entry.size(window, p.window_shape);
    if (p.state) {
        p.state_size = state_entry.size(state, p.state_shape);
        if (p.state_size.floats_per_write != 0)
            throw std::logic_error("hybrid: state memory '" + state.canonical() + "' grows as it is written");
    }
    return p;
}

MemorySize hybrid_size(const Spec& spec, const MemoryShape& shape) {
    const Parts p = parts(spec, shape);
    if (!p.fits) {
        MemorySize s;
        s.min_budget = p.min_budget;
        return s;
    }
    if (!p.state) return p.window_size;  // share = 1: the cache
    if (!p.window) return p.state_size;  // share = 0: the state memory
    MemorySize s;
    s.dims = p.window_size.dims;
    s.dims.insert(s.dims.end(), p.state_size.dims.begin(), p.state_size.dims.end());
    s.state_floats = p.window_size.state_floats < 0 ? -1 : p.window_size.state_floats + p.state_size.state_floats;
    s.floats_per_write = p.window_size.floats_per_write;
    s.initial_floats = p.window_size.initial_floats + p.state_size.state_floats;
    s.param_floats = p.window_size.param_floats + p.state_size.param_floats;
    s.derived_floats = p.window_size.derived_floats + p.state_size.derived_floats;
    s.build_scratch_bytes = std::max(p.window_size.build_scratch_bytes, p.state_size.build_scratch_bytes);
    s.min_budget = p.min_budget;
    return s;
}

/// A window and a recurrent state side by side (either may be absent: the other alone).
class Hybrid final : public Memory {
public:
    Hybrid(std::unique_ptr<Memory> window, std::unique_ptr<Memory> state, bool slot, int d_value)
        : window_(std::move(window)), state_(std::move(state)), slot_(slot), dv_(d_value) {
        if (slot_ && window_) {
            cache_ = dynamic_cast<const SoftmaxCache*>(window_.get());
            if (!cache_) throw std::logic_error("hybrid: the slot read needs the softmax cache as its window");
        }
    }

    void reset() override {
        if (window_) window_->reset();
        if (state_) state_->reset();
    }
    void write(ConstVecRef key, ConstVecRef value) override {
        if (window_) window_->write(key, value);
        if (state_) state_->write(key, value);
    }
    void write_batch(ConstMatRef keys, ConstMatRef values) override {
        if (window_) window_->write_batch(keys, values);
        if (state_) state_->write_batch(keys, values);
    }
    void read(ConstVecRef query, VecRef out) const override {
        if (!state_) return window_->read(query, out);
        if (!window_) return state_->read(query, out);
        Vec from_state(dv_);
        window_->read(query, out);
        state_->read(query, from_state);
        out += state_weight(query) * from_state;
    }
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override {
        require_no_hidden(options);  // the entry declares no can_hide_pairs: not even the cache alone hides one
        if (!state_) return window_->read_batch(queries, out);
        if (!window_) return state_->read_batch(queries, out);
        RowMat from_state(queries.rows(), dv_);
        window_->read_batch(queries, out);
        state_->read_batch(queries, from_state);
        for (Eigen::Index i = 0; i < queries.rows(); ++i) out.row(i) += state_weight(queries.row(i).transpose()) * from_state.row(i);
    }
    void causal(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates, MatRef out) override {
        // the entry declares no gate inputs: refused as write_gated refuses them, even by the state alone
        if (!gates.empty()) throw std::invalid_argument("the hybrid takes no per-token gate inputs");
        if (!state_) return window_->causal(queries, keys, values, gates, out);
        if (!window_) return state_->causal(queries, keys, values, gates, out);
        if (slot_) return causal_by_token(queries, keys, values, gates, out);
        // the sum read: each part's causal form, added (o_t reads both after the write at t)
        require_causal_shapes(queries, keys, values, gates, out);
        RowMat from_state(keys.rows(), dv_);
        window_->causal(queries, keys, values, gates, out);
        state_->causal(queries, keys, values, gates, from_state);
        out += from_state;
    }
    std::int64_t state_floats() const override {
        return (window_ ? window_->state_floats() : 0) + (state_ ? state_->state_floats() : 0);
    }
    /// The window's state, then the state memory's (a copy, kept until the next call).
    ConstStateView state() const override {
        if (!state_) return window_->state();
        if (!window_) return state_->state();
        const ConstStateView w = window_->state(), s = state_->state();
        flat_.resize(w.size() + s.size());
        flat_.head(w.size()) = w;
        flat_.tail(s.size()) = s;
        return ConstStateView(flat_.data(), flat_.size());
    }
    std::int64_t param_floats() const override {
        return (window_ ? window_->param_floats() : 0) + (state_ ? state_->param_floats() : 0);
    }

private:
    /// The state's weight in a read: 1 (the sum), or the slot's softmax weight.
    float state_weight(ConstVecRef query) const {
        if (!slot_) return 1.0f;
        return std::max(0.0f, 1.0f - cache_->weights(query).sum());
    }

    std::unique_ptr<Memory> window_, state_;
    bool slot_;
    int dv_;
    const SoftmaxCache* cache_ = nullptr;
    mutable Vec flat_;
};

KernelCost hybrid_cost(const Spec& spec, const MemoryShape& shape, Kernel k, I stored, I batch) {
    const Parts p = parts(spec, shape);
    KernelCost c;
    const auto add = [&](const std::optional<Spec>& part, const MemoryShape& s) {
        if (!part) return;
        const MemoryEntry& e = find_memory(part->name());
        if (!e.cost) return;
        const KernelCost x = e.cost(*part, s, k, stored, batch);
        c.flops += x.flops, c.bytes += x.bytes, c.scratch_bytes += x.scratch_bytes;
    };
    add(p.window, p.window_shape);
    add(p.state, p.state_shape);
    return c;
}

}  // namespace

MemoryEntry hybrid_entry(const std::vector<MemoryEntry>& table) {
    MemoryEntry e;
    e.name = "hybrid";
    e.description = "a window (the softmax cache) and a recurrent state sharing one budget; reads summed or through a slot";
    ParamInfo share = real_param("share", "0.5", "the window's share of the budget (0: the state alone; 1: the cache alone)", 0.0,
                                 false, 1.0);
    share.best = {"0", "0.125", "0.25", "0.5", "0.75", "0.875", "1"};
    // The state memories: the grid family (entries that split into heads and are not caches),
    // gated_deltanet first (the default).
    std::vector<std::string> states = {"gated_deltanet"};
    for (const MemoryEntry& t : table)
        if (t.splits_into_heads && !t.cache && t.name != "gated_deltanet") states.push_back(t.name);
    ParamInfo state = choice_param("state", states, "the recurrent memory beside the window (a grid-family memory)");
    ParamInfo beta;
    for (const MemoryEntry& t : table)
        if (t.name == "softmax") beta = t.params.front();
    beta.key = "window_beta";
    beta.help = "the window's beta (the cache's): " + beta.help;
    ParamInfo slot = optional_param(real_param(
        "slot", "", "the slot read: the state's read as one more slot of the window's softmax, with this constant logit "
                    "(the cache's null slot, whose row counts); none: the sum read", -std::numeric_limits<double>::infinity()));
    slot.best = {"0", "2", "4", "6", "8", "10", "12", "14", "16"};
    e.params = {share, state, beta, slot};
    // The state memories' own settings, each optional (left out: the state memory's default),
    // checked by the state memory itself when the hybrid is sized. Candidates (`key=best`): the
    // default state memory's (gated_deltanet) for its keys; the others' keys race only a list
    // given as `key=best:v1/v2/…`.
    for (const std::string& name : states)
        for (const MemoryEntry& t : table) {
            if (t.name != name) continue;
            for (const ParamInfo& q : t.params) {
                if (own_keys().count(q.key)) continue;
                auto at = std::find_if(e.params.begin(), e.params.end(), [&](const ParamInfo& x) { return x.key == q.key; });
                if (at != e.params.end()) {
                    for (const auto& c : q.choices)
                        if (std::find(at->choices.begin(), at->choices.end(), c) == at->choices.end()) at->choices.push_back(c);
                    continue;
                }
                ParamInfo copy = optional_param(q);
                if (name != states.front()) copy.best.clear();  // `key=best:v1/v2/…` races another state's values
                copy.help = "the state memory's " + q.key + " (left out: its default; " + name + "'s: " + q.default_value + "): " +
                            q.help;
                if (copy.type != ParamType::Choice) {  // each state memory checks its own range
                    copy.min = -std::numeric_limits<double>::infinity(), copy.max = std::numeric_limits<double>::infinity();
                    copy.min_open = copy.max_open = false;
                }
                e.params.push_back(copy);
            }
        }
    e.state_formula = "floor(share B / (d_k + d_v)) window pairs x (d_k + d_v) (+ one row with a slot) + the state memory's "
                      "floats at the rest of B; share 1: the cache alone, share 0: the state memory alone";
    e.paper = "Arora et al. 2024 (Based); De et al. 2024 (Griffin); McDermott et al. 2025 (LoLA)";
    e.size = hybrid_size;
    e.make = [](const Spec& spec, const MemoryShape& shape, Rng& rng) -> std::unique_ptr<Memory> {
        const Parts p = parts(spec, shape);
        if (!p.fits) throw std::logic_error("hybrid: built below its minimum budget");
        // the state first: at share 0 it draws its parameters from the stream as it would alone
        std::unique_ptr<Memory> state, window;
        if (p.state) state = find_memory(p.state->name()).make(*p.state, p.state_shape, rng);
        if (p.window) window = find_memory("softmax").make(*p.window, p.window_shape, rng);
        // one part alone is still wrapped: it reads and writes as that part, bit for bit, and refuses
        // what the hybrid's entry does not declare (gate inputs, hidden pairs)
        return std::make_unique<Hybrid>(std::move(window), std::move(state), spec.has("slot"), shape.d_value);
    };
    e.cost = hybrid_cost;
    e.splits_into_heads = true;  // heads=h: h hybrids of d/h (memories/heads.hpp)
    e.published = "";
    e.table_name = "hybrid: window + recurrent state";
    e.plain_name = "hybrid";
    return e;
}

}  // namespace memcap
