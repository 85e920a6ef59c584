// The causal backward (Memory::causal_backward) of every memory whose table entry declares
// it, against central finite differences of the memory's own causal form (Memory::causal),
// on small shapes: T = 9 tokens (40 for the checks through the grids' backward in segments),
// d = 8, random unit rows for Q, K and V and random gate inputs in their ranges (log decay
// in [−0.7, −0.05], β in [0.2, 1.2], write gate in [0.2, 0.95]). Each entry is checked at its
// defaults with every gate input it takes absent, alone and all together (a decay per channel
// where the family takes one), at a budget that makes φ narrower than d (d_φ = 4 < d_k) and one
// that makes it wider, at every value a race may choose for each of its settings (so the
// forms a raced decay, step rule or head count selects run), and with the dpfp and Taylor maps.
//
// The loss is L = Σ_tj W_tj O_tj (W fixed and random, so causal_backward gets d_out = W),
// computed in double from the float32 outputs. For every entry x of Q, K, V and the gate inputs
//
//     fd(h) = (L(x + h) − L(x − h)) / 2h,   h = 1e-2 (unit-length rows, gates of order 1)
//
// is compared with the backward pass's ∂L/∂x. The forward runs in float32, so the tolerance is
// the error fd(h) can have, from two sources, each stated:
//   rounding: each output entry passes through at most C = 4 (T + d_φ + d) rounded operations
//     (feature map, T writes, the read), each off by at most u = 2^-24 of the running
//     magnitude, independently and with mean 0 (round to nearest), so their sum grows as
//     √C u (Higham, "Accuracy and Stability of Numerical Algorithms", 2002, §2.8: the rule of
//     thumb behind its γ̃ bounds; the worst case C u is never approached by a few hundred
//     roundings). The forward is deterministic, so an output row the input cannot reach
//     (o_t for a query at another token, o_t for a key, value or gate after t) has the same
//     bits in both evaluations and cancels: |δL| ≤ ε = u √C Σ_{rows reached} |W| max(1, 2 max|O|),
//     and the difference quotient is off by at most 2ε / 2h = ε / h;
//   truncation: the central difference's h² L'''/6, estimated by Richardson's
//     |fd(2h) − fd(h)| / 3, itself off by rounding of at most (ε/h + ε/2h) / 3.
// The check: |fd(h) − ∂L/∂x| ≤ ε/h + |fd(2h) − fd(h)|/3 + ε/(2h) for every entry, and each
// input's largest gradient entry (of those checked at the first step) is far larger than its
// own tolerance (10 ×), so a wrong or
// missing gradient cannot hide under it. At the raced settings a small step or a sharp cache
// can make an input's gradient small: there it must stand above its tolerance (1 ×), or be
// within it of 0 together with every difference quotient (a saturated softmax).
// The dpfp map's relus have kinks, where a difference quotient over ±2h is no derivative:
// an entry that fails at h is checked again at h/10, then h/100 (the kink then likely beyond
// the step), each with that step's tolerance (a full check at the smaller step: it passes
// only if the gradient is right there).
// Inside a softmax's logits (the cache's queries and keys) β multiplies the step: h = 1e-2 ·
// min(1, 16/β), so β h ≤ 0.16; at β = ∞ the read is piecewise constant in them and their
// gradient must be exactly 0.
#include "core/rng.hpp"
#include "memories/grid/outer_product_grid.hpp"
#include "memories/precision.hpp"
#include "memories/registry.hpp"
#include "registry_specs.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace memcap;
using memcap::test::unit_rows;

namespace {

constexpr int kD = 8;

/// Which gate inputs a check gives.
struct GateSet {
    bool decay = false;    // log decay, one column
    bool channel = false;  // log decay, one column per channel (d_φ)
    bool beta = false;
    bool write_gate = false;
    std::string name() const {
        std::string s = channel ? "channel_decay " : decay ? "decay " : "";
        if (beta) s += "beta ";
        if (write_gate) s += "write_gate ";
        return s.empty() ? "none" : s;
    }
};

struct Check {
    std::string memory;
    std::optional<std::int64_t> budget;
    GateSet gates;
    Eigen::Index t = 9;
    // Every input's gradient must stand far above the tolerance; else (the raced settings, where a
    // cache at a large β saturates) an input may also pass with gradient and differences both
    // within the tolerance of 0, every entry still checked.
    bool strict = true;
    // A grid's backward_saved_floats as this many states: its segments this many tokens long
    // less one (0: the default, one segment at these sizes).
    Eigen::Index saved_states = 0;
    // A token whose write gate is exactly 0 (with a write gate given): skipped with its decay, a
    // jump in Δ. Its write gate is not differenced (the kink); its gradient there must be 0, as
    // its key's, value's and other gates' are (differenced: the token has no effect). −1: none.
    Eigen::Index frozen_token = -1;
};

/// Sets a grid's backward to keep `states` states at once (OuterProductGrid; others untouched).
void keep_states(Memory& mem, Eigen::Index states) {
    if (states <= 0) return;
    if (auto* grid = dynamic_cast<OuterProductGrid*>(&mem)) grid->set_backward_saved_floats(states * mem.state_floats());
}

struct Problem {
    RowMat q, k, v, w;
    TokenGates gates;
};

Problem draw(const Check& c, Eigen::Index d_phi) {
    Rng rng = Rng::stream("test_causal_backward", c.memory, c.budget.value_or(-1), c.gates.name(), c.t);
    Problem p;
    p.q = unit_rows(rng, c.t, kD), p.k = unit_rows(rng, c.t, kD), p.v = unit_rows(rng, c.t, kD);
    p.q.row(3) = p.k.row(1);  // a query that matches an earlier key
    p.w.resize(c.t, kD);
    rng.fill_normal(p.w);
    const auto uniform = [&](double lo, double hi) { return static_cast<float>(lo + (hi - lo) * rng.uniform()); };
    if (c.gates.decay || c.gates.channel) {
        p.gates.log_decay.resize(c.t, c.gates.channel ? d_phi : 1);
        for (Eigen::Index i = 0; i < p.gates.log_decay.size(); ++i) p.gates.log_decay.data()[i] = uniform(-0.7, -0.05);
    }
    if (c.gates.beta) {
        p.gates.beta.resize(c.t);
        for (Eigen::Index i = 0; i < c.t; ++i) p.gates.beta(i) = uniform(0.2, 1.2);
    }
    if (c.gates.write_gate) {
        p.gates.write_gate.resize(c.t);
        for (Eigen::Index i = 0; i < c.t; ++i) p.gates.write_gate(i) = uniform(0.2, 0.95);
        if (c.frozen_token >= 0) p.gates.write_gate(c.frozen_token) = 0.0f;
    }
    return p;
}

double loss(Memory& mem, const Problem& p, double* max_out) {
    mem.reset();
    RowMat out(p.k.rows(), p.v.cols());
    mem.causal(p.q, p.k, p.v, p.gates, out);
    if (max_out) *max_out = out.cwiseAbs().maxCoeff();
    return (out.cast<double>().array() * p.w.cast<double>().array()).sum();
}

void check_gradient(const Check& c) {
    CAPTURE(c.memory, c.budget.value_or(-1), c.gates.name(), c.t);
    const Spec spec = parse_memory_spec(c.memory);
    auto mem = make_memory(spec, MemoryShape(kD, kD, c.budget), 7);
    const Eigen::Index d_phi = mem->state_floats() / kD;
    Problem p = draw(c, d_phi);
    keep_states(*mem, c.saved_states);

    double max_out = 0.0;
    loss(*mem, p, &max_out);
    CausalGrads g;
    mem->causal_backward(p.q, p.k, p.v, p.gates, p.w, g);

    // A softmax's β multiplies the scores: the step keeps β h ≤ 0.16 (h = 1e-2 up to β = 16, as the
    // key-backward test), so the difference quotient sees the curvature it resolves. At β = ∞ the
    // read is piecewise constant in the keys and queries: their gradient must be exactly 0.
    double beta = 0.0;
    for (const ParamInfo& info : find_memory(spec.name()).params)
        if (info.key == "beta" && spec.name().find("delta") == std::string::npos) beta = spec.real("beta");
    const bool hard = std::isinf(beta);
    const double u = std::ldexp(1.0, -24), h_logit = 1e-2 * std::min(1.0, 16.0 / std::max(beta, 1e-9));
    const bool kinks = c.memory.find("dpfp") != std::string::npos;
    const double cost = 4.0 * (double(c.t) + double(std::max<Eigen::Index>(d_phi, kD)) + kD);
    // ε for an input of row `row`: the rows of O it reaches (`only`: its own row, a query)
    const Vec w_rows = p.w.cwiseAbs().rowwise().sum();
    const auto eps_at = [&](Eigen::Index row, bool only) {
        const double reached = only ? double(w_rows(row)) : double(w_rows.tail(c.t - row).sum());
        return u * std::sqrt(cost) * reached * std::max(1.0, 2.0 * max_out);
    };
    // each input and its gradient, as flat arrays
    struct Input {
        const char* name;
        float* x;
        const float* grad;
        Eigen::Index size, grad_size;
    };
    std::vector<Input> inputs = {{"query", p.q.data(), g.d_queries.data(), p.q.size(), g.d_queries.size()},
                                 {"key", p.k.data(), g.d_keys.data(), p.k.size(), g.d_keys.size()},
                                 {"value", p.v.data(), g.d_values.data(), p.v.size(), g.d_values.size()}};
    if (p.gates.log_decay.size() > 0)
        inputs.push_back({"log_decay", p.gates.log_decay.data(), g.d_log_decay.data(), p.gates.log_decay.size(),
                          g.d_log_decay.size()});
    else REQUIRE(g.d_log_decay.size() == 0);
    if (p.gates.beta.size() > 0) inputs.push_back({"beta", p.gates.beta.data(), g.d_beta.data(), p.gates.beta.size(), g.d_beta.size()});
    else REQUIRE(g.d_beta.size() == 0);
    if (p.gates.write_gate.size() > 0)
        inputs.push_back({"write_gate", p.gates.write_gate.data(), g.d_write_gate.data(), p.gates.write_gate.size(),
                          g.d_write_gate.size()});
    else REQUIRE(g.d_write_gate.size() == 0);
    REQUIRE(g.d_log_decay.rows() == p.gates.log_decay.rows());
    REQUIRE(g.d_log_decay.cols() == p.gates.log_decay.cols());

    for (const Input& in : inputs) {
        CAPTURE(in.name);
        REQUIRE(in.grad_size == in.size);
        if (hard && (std::string(in.name) == "query" || std::string(in.name) == "key")) {
            for (Eigen::Index i = 0; i < in.size; ++i) REQUIRE(in.grad[i] == 0.0f);
            continue;
        }
        const std::string name = in.name;
        const double h0 = (name == "query" || name == "key") && beta > 0.0 ? h_logit : 1e-2;
        double largest_tol = 0.0, largest_fd = 0.0, top_grad = -1.0, top_tol = 0.0;  // top: the largest |gradient|
        const Eigen::Index width = in.size / c.t;  // entries per token
        Eigen::Index at_kinks = 0;                 // entries checked again at h/10 (dpfp's kinks)
        for (Eigen::Index i = 0; i < in.size; ++i) {
            if (name == "write_gate" && i == c.frozen_token) {
                REQUIRE(in.grad[i] == 0.0f);
                continue;
            }
            const float x0 = in.x[i];
            const double eps = eps_at(i / width, name == "query");
            const auto at = [&](double step) {
                in.x[i] = static_cast<float>(x0 + step);
                const double l = loss(*mem, p, nullptr);
                in.x[i] = x0;
                return l;
            };
            const double grad = in.grad[i];
            double h = h0, fd1 = 0.0, fd2 = 0.0, tol = 0.0;
            for (int attempt = 0; attempt < (kinks ? 3 : 1); ++attempt, h /= 10.0) {
                fd1 = (at(h) - at(-h)) / (2 * h), fd2 = (at(2 * h) - at(-2 * h)) / (4 * h);
                tol = eps / h + std::abs(fd2 - fd1) / 3.0 + eps / (2 * h);
                if (std::abs(fd1 - grad) <= tol) break;
                if (attempt == 0 && kinks) ++at_kinks;  // a relu's kink within 2h: again at h/10
            }
            CAPTURE(i, h, fd1, fd2, grad, tol, eps);
            REQUIRE(std::abs(fd1 - grad) <= tol);
            largest_tol = std::max(largest_tol, tol);
            largest_fd = std::max(largest_fd, std::abs(fd1));
            if (h == h0 && std::abs(grad) > top_grad) top_grad = std::abs(grad), top_tol = tol;  // at the first step
        }
        CAPTURE(top_grad, top_tol, largest_tol, largest_fd, at_kinks);
        if (c.strict) REQUIRE(top_grad > 10.0 * top_tol);
        else REQUIRE((top_grad > top_tol || (top_grad <= largest_tol && largest_fd <= largest_tol)));
    }
}

std::vector<std::string> entries_with_causal_backward() {
    std::vector<std::string> names;
    for (const auto& e : memory_registry())
        if (e.causal_backward) names.push_back(e.name);
    return names;
}

/// The gate sets a check runs for an entry: none, each input it takes alone, all together.
std::vector<GateSet> gate_sets(const MemoryEntry& e) {
    std::vector<GateSet> sets{GateSet{}};
    if (e.gates.log_decay) sets.push_back(GateSet{true, false, false, false});
    if (e.gates.channel_decay) sets.push_back(GateSet{false, true, false, false});
    if (e.gates.beta) sets.push_back(GateSet{false, false, true, false});
    if (e.gates.write_gate) sets.push_back(GateSet{false, false, false, true});
    if (e.gates.any())
        sets.push_back(GateSet{e.gates.log_decay && !e.gates.channel_decay, e.gates.channel_decay, e.gates.beta, e.gates.write_gate});
    return sets;
}

GateSet all_gates(const MemoryEntry& e) { return gate_sets(e).back(); }

/// Whether the entry's parameter `key` may be `value`.
bool offers(const MemoryEntry& e, const std::string& key, const std::string& value) {
    for (const ParamInfo& p : e.params)
        if (p.key == key) return std::find(p.choices.begin(), p.choices.end(), value) != p.choices.end();
    return false;
}

}  // namespace

TEST_CASE("every causal backward matches finite differences at its defaults, with each gate input", "[causal_backward]") {
    const auto names = entries_with_causal_backward();
    REQUIRE(!names.empty());
    const std::string name = GENERATE_COPY(from_range(names));
    const MemoryEntry& e = find_memory(name);
    for (const GateSet& gates : gate_sets(e)) {
        check_gradient({name, std::nullopt, gates});
        check_gradient({name, std::int64_t{kD * 4}, gates});   // d_φ = 4 < d_k: φ = proj narrows the keys
        check_gradient({name, std::int64_t{kD * 10}, gates});  // d_φ = 10 > d_k
    }
    // every gate input given: 40 tokens in one segment; with 5 states kept, in segments of
    // ⌈√40⌉ = 7 tokens, the last 5 (a grid's backward writes each again from the state kept at
    // its start); at d_φ = 8, 16, 32 and 64, widths the grids' backward is compiled for (every one of
    // OuterProductGrid::kUnrolledWidths is compared with the reference loop bit for bit below)
    check_gradient({name, std::nullopt, all_gates(e), 40});
    check_gradient({name, std::nullopt, all_gates(e), 40, true, 5});
    // (at 64 a channel's decay moves the loss by little: its largest gradient stands 7-10x above
    // the tolerance there, not the strict 10x; every entry is still checked)
    for (const std::int64_t width : {8, 16, 32, 64})
        check_gradient({name, std::int64_t{kD * width}, all_gates(e), 12, width < 64});
    // a token skipped (write gate 0), in one segment and across segments of 3 (9 tokens)
    if (e.gates.write_gate) {
        check_gradient({name, std::nullopt, all_gates(e), 9, true, 0, 2});
        check_gradient({name, std::nullopt, all_gates(e), 9, true, 4, 3});
    }
}

TEST_CASE("every causal backward matches finite differences at each raced setting", "[causal_backward]") {
    std::vector<std::string> specs;
    // Heads of width d/h ≥ 4 (heads = 1, 2): the delta forms normalise φ, which at d/h = 1 is
    // sign(k) (derivative 0, difference quotients that jump where a coordinate crosses 0) and at
    // d/h = 2 bends by 1/|k|² near k = 0, beyond what a step of 1e-2 resolves.
    for (const std::string& text : memcap::test::conformance_specs()) {
        const Spec spec = parse_memory_spec(text);
        if (!find_memory(spec.name()).causal_backward || spec_precision(spec) != Precision::fp32) continue;
        if (spec.has("heads") && kD / spec.integer("heads") < 4) continue;
        specs.push_back(text);
    }
    const std::string text = GENERATE_COPY(from_range(specs));
    const MemoryEntry& e = find_memory(parse_memory_spec(text).name());
    check_gradient({text, std::nullopt, GateSet{}, 9, false});
    check_gradient({text, std::nullopt, all_gates(e), 9, false});
}

TEST_CASE("causal backward through the non-linear feature maps matches finite differences", "[causal_backward]") {
    for (const std::string& name : entries_with_causal_backward()) {
        const MemoryEntry& e = find_memory(name);
        // dpfp with ν = 2 (ν = 1 maps some inputs to φ = 0, where unit(φ) jumps), and Taylor at m = 3 (d_φ = 10)
        // (the gates' paths are the same as at the default map, checked above)
        if (offers(e, "phi", "dpfp")) check_gradient({name + ":phi=dpfp,nu=2", std::int64_t{kD * 24}, GateSet{}});
        if (offers(e, "phi", "taylor")) check_gradient({name + ":phi=taylor", std::int64_t{kD * 13}, GateSet{}});
    }
}

TEST_CASE("causal backward leaves the final state of the causal form's writes", "[causal_backward]") {
    for (const std::string& name : entries_with_causal_backward()) {
        const MemoryEntry& e = find_memory(name);
        for (const Eigen::Index t : {Eigen::Index{9}, Eigen::Index{40}}) {
            CAPTURE(name, t);
            const Check c{name, std::int64_t{kD * 10}, all_gates(e), t};
            auto a = make_memory(parse_memory_spec(name), MemoryShape(kD, kD, c.budget), 3);
            auto b = make_memory(parse_memory_spec(name), MemoryShape(kD, kD, c.budget), 3);
            const Problem p = draw(c, a->state_floats() / kD);
            RowMat w = RowMat::Zero(1, kD), out(t, kD);
            a->write_batch(p.k.topRows(1), p.v.topRows(1));  // a state the backward must reset
            keep_states(*a, t > 9 ? 5 : 0);  // 40 tokens: in segments of 7, the last 5
            CausalGrads g;
            a->causal_backward(p.q, p.k, p.v, p.gates, p.w, g);
            b->reset();
            b->causal_by_token(p.q, p.k, p.v, p.gates, out);  // the definition's writes, bit for bit
            const Vec sa = a->state(), sb = b->state();
            REQUIRE(sa.size() == sb.size());
            REQUIRE(sa == sb);
            b->reset();
            b->causal(p.q, p.k, p.v, p.gates, out);  // an override (linear's chunks): up to rounding
            const Vec sc = b->state();
            REQUIRE((sa - sc).cwiseAbs().maxCoeff() <= 1e-5f * std::max(1.0f, sc.cwiseAbs().maxCoeff()));
        }
    }
}

TEST_CASE("the states causal_for_backward keeps give the backward bit for bit, for those inputs only", "[causal_backward]") {
    // The trained layer's forward asks the memory to keep what its backward would compute again
    // (the grids: every token's state). The outputs and the gradients must be those of causal()
    // then causal_backward() bit for bit; a backward on other inputs (one value changed, or the
    // state not the zero state when the forward began) must not use them.
    const auto same = [](const auto& x, const auto& y) {
        return x.rows() == y.rows() && x.cols() == y.cols() && (x.size() == 0 || x == y);
    };
    const auto same_grads = [&](const CausalGrads& x, const CausalGrads& y) {
        return same(x.d_queries, y.d_queries) && same(x.d_keys, y.d_keys) && same(x.d_values, y.d_values) &&
               same(x.d_log_decay, y.d_log_decay) && same(x.d_beta, y.d_beta) && same(x.d_write_gate, y.d_write_gate);
    };
    int kept_somewhere = 0;
    for (const std::string& name : entries_with_causal_backward()) {
        const MemoryEntry& e = find_memory(name);
        for (const GateSet& gates : gate_sets(e)) {
            CAPTURE(name, gates.name());
            const Check c{name, std::int64_t{kD * 10}, gates, 12};
            auto plain = make_memory(parse_memory_spec(name), MemoryShape(kD, kD, c.budget), 3);
            auto asked = make_memory(parse_memory_spec(name), MemoryShape(kD, kD, c.budget), 3);
            const Problem p = draw(c, plain->state_floats() / kD);
            RowMat out_plain(c.t, kD), out_asked(c.t, kD);
            CausalGrads g_plain, g_asked;
            plain->reset();
            plain->causal(p.q, p.k, p.v, p.gates, out_plain);
            plain->causal_backward(p.q, p.k, p.v, p.gates, p.w, g_plain);
            asked->reset();
            asked->causal_for_backward(p.q, p.k, p.v, p.gates, out_asked);
            REQUIRE(out_asked == out_plain);
            // every grid keeps them but linear (and Based, linear with the Taylor map): its causal
            // form is its chunks, whose states are not the tokens' writes
            const auto* grid = dynamic_cast<const OuterProductGrid*>(asked.get());
            const bool keeps = grid && grid->holds_kept_states();
            if (grid) CHECK(keeps == (name != "linear" && name != "based"));
            kept_somewhere += keeps;
            asked->causal_backward(p.q, p.k, p.v, p.gates, p.w, g_asked);
            if (grid) REQUIRE(!grid->holds_kept_states());  // used once
            REQUIRE(same_grads(g_asked, g_plain));
            REQUIRE(Vec(asked->state()) == Vec(plain->state()));

            // other values than the forward wrote: the backward writes them itself
            Problem other = p;
            other.v(c.t / 2, 1) += 0.25f;
            CausalGrads g_other, g_fresh;
            plain->causal_backward(other.q, other.k, other.v, other.gates, other.w, g_fresh);
            asked->reset();
            asked->causal_for_backward(p.q, p.k, p.v, p.gates, out_asked);
            asked->causal_backward(other.q, other.k, other.v, other.gates, other.w, g_other);
            REQUIRE(same_grads(g_other, g_fresh));
            REQUIRE(!same(g_other.d_keys, g_plain.d_keys));  // (the changed value moved the gradients)
            // the forward from a state that is not the zero state keeps nothing
            asked->reset();
            asked->write_batch(p.k.topRows(1), p.v.topRows(1));
            asked->causal_for_backward(p.q, p.k, p.v, p.gates, out_asked);
            asked->causal_backward(p.q, p.k, p.v, p.gates, p.w, g_asked);
            REQUIRE(same_grads(g_asked, g_plain));  // the backward starts from the zero state
            // a kept forward is used once: a second backward writes the tokens itself, the same bits
            asked->reset();
            asked->causal_for_backward(p.q, p.k, p.v, p.gates, out_asked);
            asked->causal_backward(p.q, p.k, p.v, p.gates, p.w, g_asked);
            asked->causal_backward(p.q, p.k, p.v, p.gates, p.w, g_other);
            REQUIRE(same_grads(g_other, g_plain));
        }
    }
    CHECK(kept_somewhere > 0);
}

TEST_CASE("a gate input a memory does not take is refused by its causal backward", "[causal_backward]") {
    for (const std::string& name : entries_with_causal_backward()) {
        const MemoryEntry& e = find_memory(name);
        if (e.gates.beta) continue;
        CAPTURE(name);
        auto mem = make_memory(parse_memory_spec(name), MemoryShape(kD, kD), 1);
        const RowMat x = RowMat::Zero(3, kD);
        TokenGates gates;
        gates.beta = Vec::Ones(3);
        CausalGrads g;
        REQUIRE_THROWS_AS(mem->causal_backward(x, x, x, gates, x, g), std::invalid_argument);
    }
}

TEST_CASE("a memory without a causal backward refuses one", "[causal_backward]") {
    int refused = 0;
    for (const auto& e : memory_registry()) {
        if (e.causal_backward) continue;
        CAPTURE(e.name);
        auto mem = make_memory(parse_memory_spec(e.name), MemoryShape(kD, kD), 1);
        const RowMat x = RowMat::Zero(2, kD);
        CausalGrads g;
        bool logic_error = false;
        try {
            mem->causal_backward(x, x, x, TokenGates{}, x, g);
        } catch (const std::invalid_argument&) {  // a logic_error too, but a refused input, not the missing pass
        } catch (const std::logic_error&) {
            logic_error = true;
        }
        REQUIRE(logic_error);
        ++refused;
    }
    REQUIRE(refused > 0);
}

TEST_CASE("the grids' backward compiled for a width gives the reference loop's bits", "[causal_backward]") {
    // causal_backward's pass over the rows is compiled for the widths kUnrolledWidths names (the
    // row and the sums held in registers); it must do the reference loop's madds in its order:
    // the same bits (compared as bytes: +0 and -0 differ).
    const auto same = [](const auto& x, const auto& y) {
        return x.rows() == y.rows() && x.cols() == y.cols() &&
               (x.size() == 0 || std::memcmp(x.data(), y.data(), sizeof(float) * static_cast<std::size_t>(x.size())) == 0);
    };
    std::set<int> covered;
    for (const std::string& name : entries_with_causal_backward()) {
        const MemoryEntry& e = find_memory(name);
        for (const int width : OuterProductGrid::kUnrolledWidths) {
            std::vector<GateSet> sets = gate_sets(e);
            for (const GateSet& gates : sets) {
                CAPTURE(name, width, gates.name());
                Check c{name, std::int64_t{kD} * width, gates, 11};
                if (gates.write_gate) c.frozen_token = 4;  // a skipped token too
                auto fast = make_memory(parse_memory_spec(name), MemoryShape(kD, kD, c.budget), 5);
                auto slow = make_memory(parse_memory_spec(name), MemoryShape(kD, kD, c.budget), 5);
                auto* grid = dynamic_cast<OuterProductGrid*>(slow.get());
                if (!grid || fast->state_floats() != std::int64_t{kD} * width) break;  // not a grid, or φ not this wide
                grid->set_unrolled_backward(false);
                const Problem p = draw(c, width);
                CausalGrads a, b;
                fast->reset(), slow->reset();
                fast->causal_backward(p.q, p.k, p.v, p.gates, p.w, a);
                slow->causal_backward(p.q, p.k, p.v, p.gates, p.w, b);
                REQUIRE(same(a.d_queries, b.d_queries));
                REQUIRE(same(a.d_keys, b.d_keys));
                REQUIRE(same(a.d_values, b.d_values));
                REQUIRE(same(a.d_log_decay, b.d_log_decay));
                REQUIRE(same(a.d_beta, b.d_beta));
                REQUIRE(same(a.d_write_gate, b.d_write_gate));
                REQUIRE(a.d_keys.cwiseAbs().maxCoeff() > 0.0f);  // (a backward that did something)
                covered.insert(width);
            }
        }
    }
    for (const int width : OuterProductGrid::kUnrolledWidths) {
        CAPTURE(width);
        CHECK(covered.count(width) == 1);
    }
}
