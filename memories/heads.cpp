// memcap/memories/heads.cpp — see heads.hpp.
#include "memories/heads.hpp"

#include "core/error.hpp"

#include <vector>

namespace memcap {

namespace {

/// h memories side by side, each on its slice of the keys, values and queries.
class Heads final : public Memory {
public:
    explicit Heads(std::vector<std::unique_ptr<Memory>> heads, int d_key, int d_value)
        : heads_(std::move(heads)), dk_(d_key / static_cast<int>(heads_.size())), dv_(d_value / static_cast<int>(heads_.size())) {}

    void reset() override {
        for (auto& h : heads_) h->reset();
    }
    void write(ConstVecRef key, ConstVecRef value) override {
        for (std::size_t i = 0; i < heads_.size(); ++i) heads_[i]->write(key.segment(kofs(i), dk_), value.segment(vofs(i), dv_));
    }
    void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) override {
        for (std::size_t i = 0; i < heads_.size(); ++i)
            heads_[i]->write_gated(key.segment(kofs(i), dk_), value.segment(vofs(i), dv_), gate);
    }
    void write_batch(ConstMatRef keys, ConstMatRef values) override {
        for (std::size_t i = 0; i < heads_.size(); ++i)
            heads_[i]->write_batch(keys.middleCols(kofs(i), dk_), values.middleCols(vofs(i), dv_));
    }
    void read(ConstVecRef query, VecRef out) const override {
        Vec tmp(dv_);
        for (std::size_t i = 0; i < heads_.size(); ++i) {
            heads_[i]->read(query.segment(kofs(i), dk_), tmp);
            out.segment(vofs(i), dv_) = tmp;
        }
    }
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override {
        RowMat tmp(queries.rows(), dv_);
        for (std::size_t i = 0; i < heads_.size(); ++i) {
            heads_[i]->read_batch(queries.middleCols(kofs(i), dk_), tmp, options);
            out.middleCols(vofs(i), dv_) = tmp;
        }
    }
    void causal(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates, MatRef out) override {
        require_causal_shapes(queries, keys, values, gates, out);
        RowMat tmp(keys.rows(), dv_);
        for (std::size_t i = 0; i < heads_.size(); ++i) {
            heads_[i]->causal(queries.middleCols(kofs(i), dk_), keys.middleCols(kofs(i), dk_), values.middleCols(vofs(i), dv_),
                              gates, tmp);
            out.middleCols(vofs(i), dv_) = tmp;
        }
    }
    void backward(ConstMatRef keys, ConstMatRef values, ConstMatRef queries, ConstMatRef d_reads, MatRef d_keys,
                  MatRef d_queries) const override {
        RowMat dk(keys.rows(), dk_), dq(queries.rows(), dk_);
        for (std::size_t i = 0; i < heads_.size(); ++i) {
            heads_[i]->backward(keys.middleCols(kofs(i), dk_), values.middleCols(vofs(i), dv_), queries.middleCols(kofs(i), dk_),
                                d_reads.middleCols(vofs(i), dv_), dk, dq);
            d_keys.middleCols(kofs(i), dk_) = dk;
            d_queries.middleCols(kofs(i), dk_) = dq;
        }
    }
    /// Each head's causal backward on its slice of the columns; the gate inputs, which every
    /// head takes whole, get the sum of the heads' gradients.
    void causal_backward(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates,
                         ConstMatRef d_out, CausalGrads& grads) override {
        const Eigen::Index n = keys.rows();
        grads.d_queries.resize(n, queries.cols()), grads.d_keys.resize(n, keys.cols()), grads.d_values.resize(n, values.cols());
        grads.d_log_decay.setZero(gates.log_decay.rows(), gates.log_decay.cols());
        grads.d_beta.setZero(gates.beta.size()), grads.d_write_gate.setZero(gates.write_gate.size());
        CausalGrads head;
        for (std::size_t i = 0; i < heads_.size(); ++i) {
            heads_[i]->causal_backward(queries.middleCols(kofs(i), dk_), keys.middleCols(kofs(i), dk_),
                                       values.middleCols(vofs(i), dv_), gates, d_out.middleCols(vofs(i), dv_), head);
            grads.d_queries.middleCols(kofs(i), dk_) = head.d_queries;
            grads.d_keys.middleCols(kofs(i), dk_) = head.d_keys;
            grads.d_values.middleCols(vofs(i), dv_) = head.d_values;
            if (gates.log_decay.size() > 0) grads.d_log_decay += head.d_log_decay;
            if (gates.beta.size() > 0) grads.d_beta += head.d_beta;
            if (gates.write_gate.size() > 0) grads.d_write_gate += head.d_write_gate;
        }
    }
    std::int64_t state_floats() const override {
        std::int64_t s = 0;
        for (const auto& h : heads_) s += h->state_floats();
        return s;
    }
    /// The heads' states one after another (a copy, kept until the next call).
    ConstStateView state() const override {
        flat_.resize(state_floats());
        Eigen::Index at = 0;
        for (const auto& h : heads_) {
            const ConstStateView s = h->state();
            flat_.segment(at, s.size()) = s;
            at += s.size();
        }
        return ConstStateView(flat_.data(), flat_.size());
    }
    std::int64_t param_floats() const override {
        std::int64_t s = 0;
        for (const auto& h : heads_) s += h->param_floats();
        return s;
    }

private:
    Eigen::Index kofs(std::size_t i) const { return static_cast<Eigen::Index>(i) * dk_; }
    Eigen::Index vofs(std::size_t i) const { return static_cast<Eigen::Index>(i) * dv_; }

    std::vector<std::unique_ptr<Memory>> heads_;
    int dk_, dv_;
    mutable Vec flat_;
};

/// The shape of one of h heads; UsageError when h does not split it.
MemoryShape head_shape(const std::string& name, int h, const MemoryShape& shape) {
    if (shape.d_key % h != 0 || shape.d_value % h != 0)
        throw UsageError("memory '" + name + "': heads=" + std::to_string(h) + " must divide d_key=" + std::to_string(shape.d_key) +
                         " and d_value=" + std::to_string(shape.d_value));
    if (shape.salience_feature)
        throw UsageError("memory '" + name + "': heads=" + std::to_string(h) +
                         " with a task that declares a salience feature (its mark would reach one head only)");
    MemoryShape s = shape;
    s.d_key = shape.d_key / h, s.d_value = shape.d_value / h;
    if (shape.budget_floats) s.budget_floats = *shape.budget_floats / h;
    return s;
}

}  // namespace

ParamInfo heads_param() {
    ParamInfo p = optional_param(int_param("heads", "", "h heads, each on d/h of the width with floor(B/h) floats of state; 1 = one", 1, 1024));
    p.same_as_none = "1";
    p.best = {"1", "2", "4", "8"};
    return p;
}

int spec_heads(const Spec& spec) { return spec.has("heads") ? static_cast<int>(spec.integer("heads")) : 1; }

void add_heads(MemoryEntry& e) {
    e.params.push_back(heads_param());
    const std::string name = e.name;
    auto size = e.size;
    e.size = [size, name](const Spec& spec, const MemoryShape& shape) {
        const int h = spec_heads(spec);
        if (h == 1) return size(spec, shape);
        MemorySize s = size(spec, head_shape(name, h, shape));
        s.dims.insert(s.dims.begin(), {"heads", h});
        const auto times = [h](std::int64_t x) { return x < 0 ? x : x * h; };
        s.state_floats = times(s.state_floats);
        s.floats_per_write = times(s.floats_per_write);
        s.initial_floats = times(s.initial_floats);
        s.param_floats = times(s.param_floats);
        s.derived_floats = times(s.derived_floats);
        s.min_budget = times(s.min_budget);
        return s;
    };
    auto make = e.make;
    e.make = [make, name](const Spec& spec, const MemoryShape& shape, Rng& rng) -> std::unique_ptr<Memory> {
        const int h = spec_heads(spec);
        if (h == 1) return make(spec, shape, rng);
        const MemoryShape per = head_shape(name, h, shape);
        std::vector<std::unique_ptr<Memory>> heads;
        for (int i = 0; i < h; ++i) heads.push_back(make(spec, per, rng));
        return std::make_unique<Heads>(std::move(heads), shape.d_key, shape.d_value);
    };
    if (e.cost) {
        auto cost = e.cost;
        e.cost = [cost, name](const Spec& spec, const MemoryShape& shape, Kernel k, std::int64_t stored, std::int64_t batch) {
            const int h = spec_heads(spec);
            if (h == 1) return cost(spec, shape, k, stored, batch);
            KernelCost c = cost(spec, head_shape(name, h, shape), k, stored, batch);
            c.flops *= h, c.bytes *= h;
            return c;
        };
    }
    const auto one_head = [](auto model) {
        return [model](const Spec& spec, const MemorySize& s, const MemoryShape& shape, const auto& task)
                   -> std::optional<theory::RecallModel> {
            if (spec_heads(spec) != 1) return std::nullopt;
            return model(spec, s, shape, task);
        };
    };
    if (e.recall_model) e.recall_model = one_head(e.recall_model);
    if (e.horizon_model) e.horizon_model = one_head(e.horizon_model);
    if (e.takes_spectra) {
        auto spectra = e.takes_spectra;
        e.takes_spectra = [spectra](const Spec& spec, const MemoryShape& shape) { return spec_heads(spec) == 1 && spectra(spec, shape); };
    }
}

}  // namespace memcap
