// memcap/memories/mom/mom.cpp — see mom.hpp.
#include "memories/mom/mom.hpp"

#include "core/error.hpp"
#include "core/rng.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

namespace memcap {

// A named namespace, not an anonymous one: the unity build puts this file beside the hybrid's,
// whose anonymous namespace has its own own_keys, Parts and parts.
namespace mom_parts {

using I = std::int64_t;

/// The keys the mixture declares itself; every other key of its spec is the base memory's.
const std::set<std::string>& own_keys() {
    static const std::set<std::string> keys = {"memories", "topk", "temp", "shared", "base", "precision", "heads"};
    return keys;
}

struct Parts {
    Spec base;
    int routed = 1, count = 1;  // M, and P = M + shared
    MemoryShape part_shape;
    MemorySize part_size;
    I min_budget = 1;
    bool fits = true;
};

std::string base_text(const Spec& spec) { return inner_memory_text(spec, "mom", "base", own_keys()); }

Parts parts(const Spec& spec, const MemoryShape& shape) {
    Parts p;
    try {
        p.base = parse_memory_spec(base_text(spec));
    } catch (const UsageError& e) {
        throw UsageError("memory '" + spec.canonical() + "': its base memory '" + base_text(spec) + "': " + e.what());
    }
    const MemoryEntry& base = find_memory(p.base.name());
    p.routed = static_cast<int>(spec.integer("memories"));
    p.count = p.routed + static_cast<int>(spec.integer("shared"));
    p.part_shape = shape;
    p.min_budget = p.count * base.min_budget(p.base, shape);
    if (shape.budget_floats) {
        if (*shape.budget_floats < p.min_budget) {
            p.fits = false;
            return p;
        }
        p.part_shape.budget_floats = *shape.budget_floats / p.count;
    }
    p.part_size = base.size(p.base, p.part_shape);
    if (p.part_size.floats_per_write != 0)
        throw std::logic_error("mom: base memory '" + p.base.canonical() + "' grows as it is written");
    return p;
}

I router_floats(const Parts& p, const MemoryShape& shape) { return p.routed >= 2 ? I{p.routed} * shape.d_key : 0; }

MemorySize mom_size(const Spec& spec, const MemoryShape& shape) {
    const Parts p = parts(spec, shape);
    MemorySize s;
    s.min_budget = p.min_budget;
    if (!p.fits) return s;
    if (p.count == 1) return p.part_size;  // M = 1: the base memory
    s.dims = {{"memories", p.routed}, {"shared", p.count - p.routed}};
    s.dims.insert(s.dims.end(), p.part_size.dims.begin(), p.part_size.dims.end());
    s.state_floats = I{p.count} * p.part_size.state_floats;
    s.param_floats = I{p.count} * p.part_size.param_floats + router_floats(p, shape);
    s.derived_floats = I{p.count} * p.part_size.derived_floats;
    s.build_scratch_bytes = p.part_size.build_scratch_bytes;
    return s;
}

class Mixture final : public Memory {
public:
    Mixture(std::vector<std::unique_ptr<Memory>> parts, int routed, int topk, double temp, RowMat router, int d_value)
        : parts_(std::move(parts)), routed_(routed), topk_(std::min(topk, routed)), temp_(static_cast<float>(temp)),
          router_(std::move(router)), dv_(d_value) {}

    void reset() override {
        for (auto& m : parts_) m->reset();
    }
    void write(ConstVecRef key, ConstVecRef value) override {
        if (routed_ == 1) {
            parts_[0]->write(key, value);
        } else {
            route(key);
            for (int j = 0; j < topk_; ++j) parts_[static_cast<std::size_t>(chosen_[static_cast<std::size_t>(j)])]->write(key, value);
        }
        if (shared()) parts_.back()->write(key, value);
    }
    void write_batch(ConstMatRef keys, ConstMatRef values) override {
        if (routed_ == 1) {
            parts_[0]->write_batch(keys, values);
        } else {
            // each memory's own pairs, in write order: the memories are independent of each other
            std::vector<std::vector<Eigen::Index>> rows(static_cast<std::size_t>(routed_));
            for (Eigen::Index i = 0; i < keys.rows(); ++i) {
                route(keys.row(i).transpose());
                for (int j = 0; j < topk_; ++j) rows[static_cast<std::size_t>(chosen_[static_cast<std::size_t>(j)])].push_back(i);
            }
            for (int m = 0; m < routed_; ++m) {
                const auto& r = rows[static_cast<std::size_t>(m)];
                if (r.empty()) continue;
                RowMat k(static_cast<Eigen::Index>(r.size()), keys.cols()), v(static_cast<Eigen::Index>(r.size()), values.cols());
                for (std::size_t i = 0; i < r.size(); ++i) {
                    k.row(static_cast<Eigen::Index>(i)) = keys.row(r[i]);
                    v.row(static_cast<Eigen::Index>(i)) = values.row(r[i]);
                }
                parts_[static_cast<std::size_t>(m)]->write_batch(k, v);
            }
        }
        if (shared()) parts_.back()->write_batch(keys, values);
    }
    void read(ConstVecRef query, VecRef out) const override {
        if (routed_ == 1 && !shared()) return parts_[0]->read(query, out);
        Vec part(dv_);
        out.setZero();
        if (routed_ == 1) {
            parts_[0]->read(query, part);
            out += part;
        } else {
            route(query);
            for (int j = 0; j < topk_; ++j) {
                parts_[static_cast<std::size_t>(chosen_[static_cast<std::size_t>(j)])]->read(query, part);
                out += weight_[static_cast<std::size_t>(j)] * part;
            }
        }
        if (shared()) {
            parts_.back()->read(query, part);
            out += part;
        }
    }
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override {
        require_no_hidden(options);
        if (routed_ == 1 && !shared()) return parts_[0]->read_batch(queries, out);
        std::vector<RowMat> reads(parts_.size(), RowMat(queries.rows(), dv_));
        for (std::size_t m = 0; m < parts_.size(); ++m) parts_[m]->read_batch(queries, reads[m]);
        for (Eigen::Index i = 0; i < queries.rows(); ++i) {
            out.row(i).setZero();
            if (routed_ == 1) {
                out.row(i) += reads[0].row(i);
            } else {
                route(queries.row(i).transpose());
                for (int j = 0; j < topk_; ++j)
                    out.row(i) += weight_[static_cast<std::size_t>(j)] * reads[static_cast<std::size_t>(chosen_[static_cast<std::size_t>(j)])].row(i);
            }
            if (shared()) out.row(i) += reads.back().row(i);
        }
    }
    void causal(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates, MatRef out) override {
        if (!gates.empty()) throw std::invalid_argument("mom takes no per-token gate inputs");
        if (routed_ == 1 && !shared()) return parts_[0]->causal(queries, keys, values, gates, out);
        causal_by_token(queries, keys, values, gates, out);
    }
    std::int64_t state_floats() const override {
        std::int64_t n = 0;
        for (const auto& m : parts_) n += m->state_floats();
        return n;
    }
    ConstStateView state() const override {
        if (parts_.size() == 1) return parts_[0]->state();
        flat_.resize(state_floats());
        Eigen::Index at = 0;
        for (const auto& m : parts_) {
            const ConstStateView s = m->state();
            flat_.segment(at, s.size()) = s;
            at += s.size();
        }
        return ConstStateView(flat_.data(), flat_.size());
    }
    std::int64_t param_floats() const override {
        std::int64_t n = routed_ >= 2 ? router_.size() : 0;
        for (const auto& m : parts_) n += m->param_floats();
        return n;
    }

private:
    bool shared() const { return static_cast<int>(parts_.size()) > routed_; }
    /// The top k memories for `x` (chosen_, by score, ties to the lower index) and their weights (weight_).
    void route(ConstVecRef x) const {
        scores_ = router_ * x;
        order_.resize(static_cast<std::size_t>(routed_));
        std::iota(order_.begin(), order_.end(), 0);
        std::partial_sort(order_.begin(), order_.begin() + topk_, order_.end(), [&](int a, int b) {
            return scores_(a) > scores_(b) || (scores_(a) == scores_(b) && a < b);
        });
        chosen_.assign(order_.begin(), order_.begin() + topk_);
        weight_.assign(static_cast<std::size_t>(topk_), 0.0f);
        if (std::isinf(temp_)) {
            weight_[0] = 1.0f;
            return;
        }
        const float top = scores_(chosen_[0]);
        float sum = 0.0f;
        for (int j = 0; j < topk_; ++j) sum += weight_[static_cast<std::size_t>(j)] = std::exp(temp_ * (scores_(chosen_[static_cast<std::size_t>(j)]) - top));
        for (auto& w : weight_) w /= sum;
    }

    std::vector<std::unique_ptr<Memory>> parts_;
    int routed_, topk_;
    float temp_;
    RowMat router_;  // M × d_k, unit rows
    int dv_;
    mutable Vec scores_, flat_;
    mutable std::vector<int> order_, chosen_;
    mutable std::vector<float> weight_;
};

KernelCost mom_cost(const Spec& spec, const MemoryShape& shape, Kernel k, I stored, I batch) {
    const Parts p = parts(spec, shape);
    KernelCost c;
    const MemoryEntry& e = find_memory(p.base.name());
    if (!e.cost || !p.fits) return c;
    const KernelCost x = e.cost(p.base, p.part_shape, k, stored, batch);
    const int k_used = std::min<int>(static_cast<int>(spec.integer("topk")), p.routed);
    // a write: the k routed memories and the shared one; a read: every memory reads the batch
    const double parts_used = k == Kernel::write_batch ? double(k_used + (p.count - p.routed)) : double(p.count);
    c.flops = parts_used * x.flops + (p.routed >= 2 ? 2.0 * double(batch) * p.routed * shape.d_key : 0.0);
    c.bytes = parts_used * x.bytes;
    c.scratch_bytes = x.scratch_bytes + (k == Kernel::read_batch ? kFloat * double(p.count) * double(batch) * shape.d_value : 0.0);
    return c;
}

}  // namespace mom_parts

MemoryEntry mom_entry(const std::vector<MemoryEntry>& table) {
    MemoryEntry e;
    e.name = "mom";
    e.description = "Mixture-of-Memories: M recurrent memories sharing one budget, a fixed random router writing each pair to its top k";
    ParamInfo memories = int_param("memories", "4", "M, the routed memories (1: the base memory alone)", 1, 64);
    memories.best = {"1", "2", "4", "8"};
    ParamInfo topk = int_param("topk", "2", "k, the memories a pair is written to and a read mixes (at most M used)", 1, 64);
    topk.best = {"1", "2"};
    ParamInfo temp = real_param("temp", "inf", "router sharpness tau: the read's weights softmax(tau R q) over the top k (inf: the top one alone)",
                                0.0, true);
    temp.allow_inf = true;
    temp.best = {"inf", "16", "4", "1"};
    ParamInfo shared = int_param("shared", "0", "1: one more memory, written with every pair and read at every query", 0, 1);
    shared.best = {"0", "1"};
    std::vector<std::string> bases = {"gated_deltanet"};
    for (const MemoryEntry& t : table)
        if (t.splits_into_heads && !t.cache && t.name != "gated_deltanet") bases.push_back(t.name);
    ParamInfo base = choice_param("base", bases, "the memory each part is (a grid-family memory)");
    e.params = {memories, topk, temp, shared, base};
    // The base memories' own settings, as the hybrid's state memory's (memories/hybrid/).
    for (const std::string& name : bases)
        for (const MemoryEntry& t : table) {
            if (t.name != name) continue;
            for (const ParamInfo& q : t.params) {
                if (mom_parts::own_keys().count(q.key)) continue;
                auto at = std::find_if(e.params.begin(), e.params.end(), [&](const ParamInfo& x) { return x.key == q.key; });
                if (at != e.params.end()) {
                    for (const auto& c : q.choices)
                        if (std::find(at->choices.begin(), at->choices.end(), c) == at->choices.end()) at->choices.push_back(c);
                    continue;
                }
                ParamInfo copy = optional_param(q);
                if (name != bases.front()) copy.best.clear();
                copy.help = "the base memory's " + q.key + " (left out: its default; " + name + "'s: " + q.default_value + "): " + q.help;
                if (copy.type != ParamType::Choice) {
                    copy.min = -std::numeric_limits<double>::infinity(), copy.max = std::numeric_limits<double>::infinity();
                    copy.min_open = copy.max_open = false;
                }
                e.params.push_back(copy);
            }
        }
    e.state_formula = "P x the base memory's floats at floor(B / P), P = M + shared (the budget divided equally); "
                      "M = 1 without a shared memory: the base memory alone";
    e.paper = "Du, Sun, Lan, Hu & Cheng 2025 (MoM: Mixture-of-Memories)";
    e.size = mom_parts::mom_size;
    e.make = [](const Spec& spec, const MemoryShape& shape, Rng& rng) -> std::unique_ptr<Memory> {
        const mom_parts::Parts p = mom_parts::parts(spec, shape);
        if (!p.fits) throw std::logic_error("mom: built below its minimum budget");
        // the parts first, in order: at M = 1 the base memory draws its parameters as it would alone
        std::vector<std::unique_ptr<Memory>> built;
        for (int m = 0; m < p.count; ++m) built.push_back(find_memory(p.base.name()).make(p.base, p.part_shape, rng));
        RowMat router(p.routed >= 2 ? p.routed : 0, shape.d_key);
        if (p.routed >= 2) {
            rng.fill_normal(router);
            normalise_rows(router);
        }
        return std::make_unique<mom_parts::Mixture>(std::move(built), p.routed, static_cast<int>(spec.integer("topk")), spec.real("temp"),
                                         std::move(router), shape.d_value);
    };
    e.cost = mom_parts::mom_cost;
    e.published = "Mixture-of-Memories";
    e.table_name = "Mixture-of-Memories (untrained router)";
    e.reduces_to = "gated_deltanet";  // its default base
    e.reduces_when = "memories=1,shared=0";
    return e;
}

}  // namespace memcap
