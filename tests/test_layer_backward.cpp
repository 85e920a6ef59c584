// The trained frame's layer (harness/train/layer.hpp): its hand-written backward pass against
// central finite differences of the loss, for every parameter group and every gate map, through a
// small test-only memory with its own causal backward (the gated linear recurrence with identity
// features: S ← S diag(a_t) + β_t w_t v_t k_tᵀ, o_t = S_t q_t), and through each registered memory
// that declares causal_backward. Also: the layer's parameter count, and that a recipe asks only
// for gates its memory declares.
#include "core/error.hpp"
#include "core/rng.hpp"
#include "harness/train/layer.hpp"
#include "core/seeds.hpp"
#include "harness/train/trainer.hpp"
#include "memories/registry.hpp"
#include "registry_specs.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

using namespace memcap;
using namespace memcap::train;
using memcap::test::unit_rows;

namespace {

/// S (d × d) ← S diag(a_t) + s_t v_t k_tᵀ, o_t = S_t q_t, with a_t = exp(log_decay) (one or d
/// channels; absent: 1) and s_t = β_t · write_gate_t (each absent: 1). Its backward keeps every S_t.
class TestRecurrence final : public Memory {
public:
    explicit TestRecurrence(int d) : d_(d), s_(RowMat::Zero(d, d)) {}
    void reset() override { s_.setZero(); }
    void write(ConstVecRef k, ConstVecRef v) override { s_ += v * k.transpose(); }
    void read(ConstVecRef q, VecRef out) const override { out = s_ * q; }
    std::int64_t state_floats() const override { return s_.size(); }
    ConstStateView state() const override { return ConstStateView(s_.data(), s_.size()); }
    void write_gated(ConstVecRef k, ConstVecRef v, const TokenGate& g) override {
        if (g.log_decay) {
            for (int j = 0; j < d_; ++j) s_.col(j) *= std::exp(g.log_decay[g.decay_channels == 1 ? 0 : j]);
        }
        const float s = g.beta.value_or(1.0f) * g.write_gate.value_or(1.0f);
        s_ += s * v * k.transpose();
    }
    void causal_backward(ConstMatRef q, ConstMatRef k, ConstMatRef v, const TokenGates& gates, ConstMatRef d_out,
                         CausalGrads& g) override {
        const Eigen::Index T = k.rows();
        std::vector<RowMat> states;
        reset();
        RowMat out(T, d_);
        states.push_back(s_);
        Vec tmp(d_);
        for (Eigen::Index t = 0; t < T; ++t) {
            write_gated(k.row(t).transpose(), v.row(t).transpose(), token_gate(gates, t));
            read(q.row(t).transpose(), tmp);
            states.push_back(s_);
        }
        g.d_queries.setZero(T, d_), g.d_keys.setZero(T, d_), g.d_values.setZero(T, d_);
        g.d_log_decay.resize(0, 0), g.d_beta.resize(0), g.d_write_gate.resize(0);
        if (gates.log_decay.size()) g.d_log_decay.setZero(T, gates.log_decay.cols());
        if (gates.beta.size()) g.d_beta.setZero(T);
        if (gates.write_gate.size()) g.d_write_gate.setZero(T);
        RowMat G = RowMat::Zero(d_, d_);
        for (Eigen::Index t = T - 1; t >= 0; --t) {
            const RowMat& st = states[static_cast<std::size_t>(t + 1)];
            const RowMat& prev = states[static_cast<std::size_t>(t)];
            g.d_queries.row(t) = (st.transpose() * d_out.row(t).transpose()).transpose();
            G += d_out.row(t).transpose() * q.row(t);
            const float beta = gates.beta.size() ? gates.beta(t) : 1.0f, wg = gates.write_gate.size() ? gates.write_gate(t) : 1.0f;
            const float s = beta * wg;
            g.d_values.row(t) = s * (G * k.row(t).transpose()).transpose();
            g.d_keys.row(t) = s * (G.transpose() * v.row(t).transpose()).transpose();
            const float ds = v.row(t) * G * k.row(t).transpose();
            if (gates.beta.size()) g.d_beta(t) = ds * wg;
            if (gates.write_gate.size()) g.d_write_gate(t) = ds * beta;
            if (gates.log_decay.size()) {
                const bool one = gates.log_decay.cols() == 1;
                for (int j = 0; j < d_; ++j) {
                    const float a = std::exp(gates.log_decay(t, one ? 0 : j));
                    const float da = G.col(j).dot(prev.col(j));
                    g.d_log_decay(t, one ? 0 : j) += da * a;
                    G.col(j) *= a;
                }
            }
        }
        reset();
        for (Eigen::Index t = 0; t < T; ++t) write_gated(k.row(t).transpose(), v.row(t).transpose(), token_gate(gates, t));
    }

private:
    int d_;
    RowMat s_;
};

/// A fixed sequence and its scored positions (a token stream, or vector tokens with candidates).
using LayerProblem = Sequence;

/// The trainer's loss of one sequence (its head: logits over value symbols, or distances to the candidates);
/// with `dy`, its gradient added into `grad` through the layer's backward pass.
double loss_of(const Layer& layer, Memory& memory, const LayerProblem& pr, RowMat* dy, std::vector<float>* grad) {
    LayerPass p;
    layer.forward(memory, pr.tokens, pr.inputs, p);
    std::int64_t correct = 0;
    const double loss = sequence_loss(layer, p, pr, 1.0, correct, dy, grad);
    if (dy) layer.backward(memory, pr.tokens, p, *dy, *grad);
    return loss;
}

/// Checks ∂L/∂θ of every group of `layer` against central differences at a few entries of each
/// (its largest-gradient entry and three random ones).
void check_gradients(Layer& layer, Memory& memory, const LayerProblem& pr) {
    std::vector<float> grad(layer.theta().size(), 0.0f);
    RowMat dy;
    loss_of(layer, memory, pr, &dy, &grad);
    Rng pick = Rng::stream("test/layer_fd/pick");
    for (const ParamGroup& g : layer.groups()) {
        CAPTURE(g.name);
        std::vector<std::size_t> at;
        std::size_t best = g.offset;
        for (std::size_t i = g.offset; i < g.offset + g.size(); ++i)
            if (std::abs(grad[i]) > std::abs(grad[best])) best = i;
        at.push_back(best);
        for (int r = 0; r < 3; ++r) at.push_back(g.offset + static_cast<std::size_t>(pick.below(static_cast<std::int64_t>(g.size()))));
        REQUIRE(std::abs(grad[best]) > 0.0f);  // every group reaches the loss
        for (const std::size_t i : at) {
            const float keep = layer.theta()[i];
            const float h = 1e-2f * std::max(1.0f, std::abs(keep)), plus = keep + h, minus = keep - h;
            layer.theta()[i] = plus;
            const double up = loss_of(layer, memory, pr, nullptr, nullptr);
            layer.theta()[i] = minus;
            const double down = loss_of(layer, memory, pr, nullptr, nullptr);
            layer.theta()[i] = keep;
            const double numeric = (up - down) / (static_cast<double>(plus) - static_cast<double>(minus));
            CAPTURE(i - g.offset, grad[i], numeric);
            REQUIRE(std::abs(grad[i] - numeric) <= 0.03 * std::max(std::abs(numeric), std::abs(double(grad[i]))) + 2e-4);
        }
    }
}

LayerProblem make_problem(std::int64_t vocab, int length, std::int64_t values) {
    LayerProblem pr;
    Rng r = Rng::stream("test/layer_fd/tokens", vocab, length);
    for (int t = 0; t < length; ++t) pr.tokens.push_back(static_cast<int>(r.below(vocab)));
    for (int t = 3; t < length; t += 3) pr.positions.push_back(t), pr.targets.push_back(static_cast<int>(r.below(values)));
    return pr;
}

/// A vector episode: n write tokens [k; v], then m read tokens [q; 0], scored against the n values.
LayerProblem make_vector_problem(int d, int n, int m) {
    Rng r = Rng::stream("test/layer_fd/vectors", d, n, m);
    Episode e;
    e.keys = unit_rows(r, n, d), e.values = unit_rows(r, n, d), e.candidates = e.values;
    e.queries.resize(m, d);
    for (int j = 0; j < m; ++j) {
        const int t = static_cast<int>(r.below(n));
        e.queries.row(j) = e.keys.row(t), e.target.push_back(t);
    }
    LayerProblem pr;
    to_sequence(e, pr);
    return pr;
}

}  // namespace

TEST_CASE("the layer's backward pass matches finite differences for every parameter group and gate map", "[train][layer]") {
    struct Case {
        const char* name;
        LayerRecipe recipe;
    };
    std::vector<Case> cases;
    LayerRecipe r;
    cases.push_back({"none", r});
    r = {}, r.conv = false, r.norm = false;
    cases.push_back({"no conv, no norm", r});
    r = {}, r.decay = LayerRecipe::Decay::scalar_softplus, r.write_gate = true;
    cases.push_back({"mamba2", r});
    r = {}, r.decay = LayerRecipe::Decay::scalar_softplus, r.beta = true;
    cases.push_back({"gated_deltanet", r});
    r = {}, r.decay = LayerRecipe::Decay::channel_gla;
    cases.push_back({"gla", r});
    r = {}, r.decay = LayerRecipe::Decay::channel_kda, r.beta = true;
    cases.push_back({"kda", r});
    r = {}, r.decay = LayerRecipe::Decay::channel_rwkv, r.beta = true;
    cases.push_back({"rwkv7", r});
    r = {}, r.beta = true;
    cases.push_back({"deltanet", r});
    for (auto& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const int d = 6;
            LayerShape s;
            s.d_in = d, s.d = d, s.d_out = d, s.vocab = 10, s.values = 5, s.channels = d, s.rank = 3;
            Rng init = Rng::stream("test/layer_fd/init", c.name);
            Layer layer(s, c.recipe, init);
            // larger gate weights than the initial ones, so the gates vary across tokens
            for (const ParamGroup& g : layer.groups())
                if (g.name == "dt_w" || g.name == "beta_w" || g.name == "decay_w2")
                    for (std::size_t i = g.offset; i < g.offset + g.size(); ++i) layer.theta()[i] *= 10.0f;
            TestRecurrence memory(d);
            check_gradients(layer, memory, make_problem(s.vocab, 14, s.values));
            REQUIRE(layer.param_floats() == Layer::count(s, c.recipe));
            // a vector task's layer: tokens [k; v] and [q; 0], no embedding, the candidates as the head
            LayerShape v = s;
            v.d_in = 2 * d, v.vocab = 0, v.values = 0;
            Rng init_v = Rng::stream("test/layer_fd/init_vector", c.name);
            Layer vector_layer(v, c.recipe, init_v);
            for (const ParamGroup& g : vector_layer.groups())
                if (g.name == "dt_w" || g.name == "beta_w" || g.name == "decay_w2")
                    for (std::size_t i = g.offset; i < g.offset + g.size(); ++i) vector_layer.theta()[i] *= 10.0f;
            check_gradients(vector_layer, memory, make_vector_problem(d, 6, 5));
        }
    }
}

TEST_CASE("every recipe asks only for gate inputs its memory declares", "[train][layer]") {
    for (const auto& e : memory_registry()) {
        CAPTURE(e.name);
        const LayerRecipe r = LayerRecipe::for_memory(e);
        if (r.decay == LayerRecipe::Decay::scalar_softplus) REQUIRE(e.gates.log_decay);
        if (r.decay != LayerRecipe::Decay::none && r.decay != LayerRecipe::Decay::scalar_softplus) REQUIRE(e.gates.channel_decay);
        if (r.beta) REQUIRE(e.gates.beta);
        if (r.write_gate) REQUIRE(e.gates.write_gate);
    }
    // the families whose papers gate by the input get gates
    REQUIRE(LayerRecipe::for_memory(find_memory("gla")).decay == LayerRecipe::Decay::channel_gla);
    REQUIRE(LayerRecipe::for_memory(find_memory("gated_deltanet")).beta);
    REQUIRE(LayerRecipe::for_memory(find_memory("mamba2")).write_gate);
    REQUIRE(LayerRecipe::for_memory(find_memory("retnet")).decay == LayerRecipe::Decay::none);
}

TEST_CASE("the layer's backward pass through every memory that declares causal_backward", "[train][layer]") {
    for (const auto& e : memory_registry()) {
        if (!e.causal_backward) continue;
        CAPTURE(e.name);
        const int d = 8;
        // a cache at a gentle β: the layer's chain is what is checked here (at β = 16 the softmax's
        // curvature is beyond a central difference of step 1e-2; the memory's own tests check it there)
        const Spec spec = parse_memory_spec(e.cache ? e.name + ":beta=1" : e.name);
        const MemoryShape shape{d, d, std::max<std::int64_t>(64, e.min_budget(spec, MemoryShape{d, d, {}}))};
        const MemorySize size = memory_size(spec, shape);
        auto memory = make_memory(spec, shape, 3);
        const auto task = make_task(parse_task_spec("mqar:vocab=16,length=16"));
        const LayerPlan plan = plan_layer(e, spec, size, shape, *task);
        Rng init = Rng::stream("test/layer_fd/init", e.name);
        Layer layer(plan.shape, plan.recipe, init);
        check_gradients(layer, *memory, make_problem(plan.shape.vocab, 14, plan.shape.values));
    }
}

namespace {

/// The test recurrence as a table entry (not registered): d × d state at any budget ≥ d².
MemoryEntry test_recurrence_entry() {
    MemoryEntry e;
    e.name = "test_recurrence";
    e.description = "identity-feature linear recurrence (tests)";
    e.params = training_params();
    e.size = [](const Spec&, const MemoryShape& s) {
        MemorySize m;
        m.dims = {{"d_phi", s.d_key}};
        m.state_floats = std::int64_t{s.d_key} * s.d_key;
        m.min_budget = m.state_floats;
        return m;
    };
    e.make = [](const Spec&, const MemoryShape& s, Rng&) -> std::unique_ptr<Memory> { return std::make_unique<TestRecurrence>(s.d_key); };
    e.causal_backward = true;
    return e;
}

}  // namespace

TEST_CASE("the trainer lowers the held-out loss, gives the same bits twice, and one model serves every n", "[train][trainer]") {
    const MemoryEntry entry = test_recurrence_entry();
    const Spec spec = bind_spec(entry.schema(), split_spec("test_recurrence:train=layer,train_lr=0.01,train_steps=200", "memory"));
    REQUIRE(trained(spec));
    const int d = 8;
    const MemoryShape shape{d, d, 64};
    const MemorySize size = entry.size(spec, shape);
    const auto task = make_task(parse_task_spec("mqar:vocab=32,length=32,episodes=4"));
    const TrainedModel a = train_model(entry, size, spec, shape, *task, d, 5);
    REQUIRE(a.ok());
    REQUIRE(a.runs.size() == 1);
    const TrainRun& run = a.run();
    REQUIRE(run.curve.front().step == 0);
    REQUIRE(std::abs(run.curve.front().heldout_loss - run.plateau) < 0.5);  // starts near ln(values)
    REQUIRE(run.best_loss < run.curve.front().heldout_loss);              // and training lowers it
    REQUIRE(a.mix == std::vector<std::int64_t>{4, 8});                     // n ≤ length/4 = 8
    const auto b = make_task(parse_task_spec("mqar:vocab=32,length=32,episodes=4"));
    const TrainedModel again = train_model(entry, size, spec, shape, *b, d, 5);
    REQUIRE(again.run().theta == run.theta);  // the same bits
    const TrainedModel other = train_model(entry, size, spec, shape, *b, d, 6);
    REQUIRE(other.run().theta != run.theta);  // another seed, another model

    // cells at different n share one cached model, and are scored on their own Test episodes
    const auto m4 = cached_model(entry, size, spec, shape, *task, d, 5);
    const auto m8 = cached_model(entry, size, spec, shape, *b, d, 5);
    REQUIRE(m4.get() == m8.get());
    REQUIRE(m4->run().theta == run.theta);
    const CellOutcome o4 = score_trained(entry, size, spec, shape, *task, TaskCell{4, d, 5});
    const CellOutcome o8 = score_trained(entry, size, spec, shape, *task, TaskCell{8, d, 5});
    REQUIRE(o4.ok);
    REQUIRE(o4.slots.size() == 1);
    REQUIRE(o4.slots[0].queries == 4 * 4);
    REQUIRE(o8.slots[0].queries == 4 * 8);
    REQUIRE(o4.param_floats == m4->layer->param_floats());
    REQUIRE(o4.message.rfind("trained: lr=0.01", 0) == 0);
}

TEST_CASE("left out, the learning rate is chosen on the tuning seed, and prepare trains what the cells would", "[train][trainer]") {
    const MemoryEntry entry = test_recurrence_entry();
    const Spec spec = bind_spec(entry.schema(), split_spec("test_recurrence:train=layer,train_steps=60", "memory"));
    const int d = 8;
    const MemoryShape shape{d, d, 64};
    const MemorySize size = entry.size(spec, shape);
    const Spec task_spec = parse_task_spec("mqar:vocab=32,length=32,episodes=2");
    const auto task = make_task(task_spec);
    // the rate whose run on the tuning seed reaches the lowest held-out loss (ties: the first)
    double best_lr = 0, best_loss = std::numeric_limits<double>::infinity();
    for (const double lr : TrainSettings::of(spec).lrs) {
        const TrainRun r = train_run(entry, size, spec, shape, *task, d, memcap::kTuningSeedBase, lr);
        REQUIRE(r.ok);
        if (r.best_loss < best_loss) best_loss = r.best_loss, best_lr = lr;
    }
    // prepare trains the tuning runs and the seeds' models on two threads; the cells then find them
    const std::atomic<bool> stop{false};
    std::vector<ModelRequest> requests;
    for (const std::uint64_t seed : {3u, 4u, 3u}) requests.push_back({&entry, size, spec, task_spec, shape, d, seed});
    prepare(requests, 2, stop);
    REQUIRE(tuned_lr(entry, size, spec, shape, *task, d) == best_lr);
    for (const std::uint64_t seed : {3u, 4u}) {
        const auto model = cached_model(entry, size, spec, shape, *task, d, seed);
        REQUIRE(model->ok());
        REQUIRE(model->tuned);
        REQUIRE(model->runs.size() == 1);  // one run per scored seed: at the tuned rate
        REQUIRE(model->run().lr == best_lr);
        REQUIRE(model->run().theta == train_run(entry, size, spec, shape, *task, d, seed, best_lr).theta);  // the same bits
        REQUIRE(model->summary().find("lr_from=tuning_seed") != std::string::npos);
    }
    // the curves name the tuning seed's runs, one of them kept
    const std::string curves = curves_csv();
    REQUIRE(curves.find(",1099511627776," + format_real(best_lr) + ",1,") != std::string::npos);
}

TEST_CASE("train=layer is refused for a memory without a causal backward pass and for a task without tokens", "[train][trainer]") {
    const auto mqar = make_task(parse_task_spec("mqar"));
    const auto recall = make_task(parse_task_spec("assoc_recall:vocab=64,keys=learned"));
    for (const auto& e : memory_registry()) {
        if (e.causal_backward) continue;
        const Spec spec = parse_memory_spec(e.name + ":train=layer");
        REQUIRE_THROWS_AS(check_trainable(e, spec, *mqar), UsageError);
    }
    const MemoryEntry entry = test_recurrence_entry();
    const Spec spec = bind_spec(entry.schema(), split_spec("test_recurrence:train=layer", "memory"));
    REQUIRE_NOTHROW(check_trainable(entry, spec, *mqar));
    REQUIRE_THROWS_AS(check_trainable(entry, spec, *recall), UsageError);
    // left out, or train=none: the spec as it always was
    REQUIRE(parse_memory_spec("linear:train=none").canonical() == parse_memory_spec("linear").canonical());
    REQUIRE_FALSE(trained(parse_memory_spec("linear")));
}

TEST_CASE("the trainer trains a vector task: write tokens [k, v], read tokens [q, 0], scored among the candidates", "[train][trainer]") {
    const MemoryEntry entry = test_recurrence_entry();
    const Spec spec = bind_spec(entry.schema(), split_spec("test_recurrence:train=layer,train_lr=0.01,train_steps=100", "memory"));
    const int d = 8;
    const MemoryShape shape{d, d, 64};
    const MemorySize size = entry.size(spec, shape);
    const auto task = make_task(parse_task_spec("assoc_recall:queries=8"));
    REQUIRE_NOTHROW(check_trainable(entry, spec, *task));
    const LayerPlan plan = plan_layer(entry, spec, size, shape, *task);
    REQUIRE(plan.shape.d_in == 2 * d);
    REQUIRE(plan.shape.vocab == 0);
    const TrainedModel a = train_model(entry, size, spec, shape, *task, d, 1);
    REQUIRE(a.ok());
    REQUIRE(a.mix.back() == 256);  // a vector task poses any n: the mix stops at 256
    REQUIRE(a.run().best_loss < a.run().curve.front().heldout_loss);
    const CellOutcome o = score_trained(entry, size, spec, shape, *task, TaskCell{4, d, 1});
    REQUIRE(o.ok);
    REQUIRE(o.slots[0].queries == 8);
}
