// memcap/harness/train/trainer.cpp — see trainer.hpp.
#include "harness/train/trainer.hpp"

#include "core/error.hpp"
#include "memories/precision.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>

namespace memcap::train {
namespace {

constexpr std::int64_t kHeldOutBase = std::int64_t{1} << 40;  // held-out episodes' indices (Split::Train)
constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kAdamEps = 1e-8;

std::string fmt(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", x);
    return buf;
}

/// The n of the training mix: powers of two from 4 (1 when the task holds fewer) to the largest n `task` poses at d.
std::vector<std::int64_t> n_mix(const Task& task, int d) {
    const auto poses = [&](std::int64_t n) {
        try {
            task.check(TaskCell{n, d, 0});
            return true;
        } catch (const UsageError&) {
            return false;
        }
    };
    std::int64_t top = 0;
    for (std::int64_t n = 1; n <= (std::int64_t{1} << 30) && poses(n); n *= 2) top = n;
    if (top == 0) throw UsageError("task '" + task.spec().canonical() + "' poses no n at d=" + std::to_string(d) + " to train on");
    std::vector<std::int64_t> mix;
    for (std::int64_t n = std::min<std::int64_t>(4, top); n <= top; n *= 2) mix.push_back(n);
    return mix;
}

/// The loss of one episode's pass at its query tokens (the head over value symbols), its queries
/// right, and — with `dy` — ∂(scale · loss)/∂Y into dy and ∂/∂head into grad.
double episode_loss(const Layer& layer, const LayerPass& p, const Episode& e, double scale, std::int64_t& correct,
                    RowMat* dy, std::vector<float>* grad) {
    const auto head = layer.head();
    const Eigen::Index m = static_cast<Eigen::Index>(e.read_at.size());
    if (dy) dy->setZero(p.y.rows(), p.y.cols());
    double loss = 0;
    Vec logits(head.rows());
    for (Eigen::Index i = 0; i < m; ++i) {
        const Eigen::Index pos = e.read_at[static_cast<std::size_t>(i)] + 1;
        const int target = e.target[static_cast<std::size_t>(i)];
        logits.noalias() = head * p.y.row(pos).transpose();
        Eigen::Index best = 0;
        const float peak = logits.maxCoeff(&best);
        if (best == target) ++correct;
        const double margin = static_cast<double>(logits(target)) - peak;  // log-sum-exp: no log(0)
        logits = (logits.array() - peak).exp();
        const double total = logits.sum();
        loss += std::log(total) - margin;
        if (dy) {
            logits /= static_cast<float>(total);
            logits(target) -= 1.0f;
            const float w = static_cast<float>(scale / static_cast<double>(m));
            dy->row(pos).noalias() += w * (logits.transpose() * head);
            layer.block(*grad, "head").noalias() += w * logits * p.y.row(pos);
        }
    }
    return loss / static_cast<double>(std::max<Eigen::Index>(m, 1));
}

struct Slot {
    std::once_flag once;
    std::shared_ptr<const TrainedModel> model;
    std::string memory, task, budget;
    int d = 0;
    std::uint64_t seed = 0;
};
std::mutex cache_mutex;
std::map<std::string, std::shared_ptr<Slot>>& cache() {
    static std::map<std::string, std::shared_ptr<Slot>> c;
    return c;
}

}  // namespace

bool trained(const Spec& memory) { return memory.has(kTrainKey) && memory.text(kTrainKey) == "layer"; }

TrainSettings TrainSettings::of(const Spec& memory) {
    TrainSettings s;
    if (memory.has(kTrainLrKey)) s.lrs = {memory.real(kTrainLrKey)};
    if (memory.has(kTrainStepsKey)) s.max_steps = memory.integer(kTrainStepsKey);
    return s;
}

std::string TrainedModel::summary() const {
    if (!ok()) return "trained: every learning rate failed";
    const TrainRun& r = run();
    return "trained: lr=" + fmt(r.lr) + (r.converged ? " converged" : " not_converged") + " steps=" + std::to_string(r.steps) +
           " best_step=" + std::to_string(r.best_step) + " heldout_loss=" + fmt(r.best_loss) + " plateau=" + fmt(plateau) +
           " left_plateau=" + std::to_string(r.left_plateau) + " layer_params=" + std::to_string(layer->param_floats());
}

void check_trainable(const MemoryEntry& entry, const Spec& spec, const Task& task) {
    const std::string what = "memory '" + spec.canonical() + "': train=layer ";
    if (!entry.causal_backward) {
        std::string able;
        for (const auto& e : memory_registry())
            if (e.causal_backward) able += (able.empty() ? "" : ", ") + e.name;
        throw UsageError(what + "trains through the memory's causal backward pass, which '" + entry.name +
                         "' does not declare (memories with one: " + (able.empty() ? "none" : able) + ")");
    }
    if (spec_precision(spec) != Precision::fp32)
        throw UsageError(what + "differentiates the fp32 state; leave precision out");
    if (spec.has("heads") && spec.integer("heads") > 1) throw UsageError(what + "takes one head (leave heads out)");
    if (task.token_vocab() <= 0)
        throw UsageError(what + "trains on a stream of vocabulary symbols (mqar); task '" + task.spec().canonical() +
                         "' is not one");
}

LayerPlan plan_layer(const MemoryEntry& entry, const Spec& spec, const MemorySize& size, const MemoryShape& shape,
                     const Task& task) {
    LayerPlan plan;
    plan.recipe = LayerRecipe::for_memory(entry.name, entry.gates);
    (void)spec;
    LayerShape& s = plan.shape;
    s.d = shape.d_key;
    s.d_in = shape.d_key;
    s.d_out = shape.d_value;
    s.vocab = task.token_vocab();
    s.values = s.vocab - s.vocab / 2;
    s.channels = 1;
    for (const auto& dim : size.dims)
        if (dim.first == "d_phi") s.channels = static_cast<int>(dim.second);
    if (plan.recipe.decay != LayerRecipe::Decay::none && plan.recipe.decay != LayerRecipe::Decay::scalar_softplus &&
        s.channels <= 0)
        s.channels = shape.d_key;
    return plan;
}

TrainedModel train_model(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                         const Task& task, int d, std::uint64_t seed) {
    const TrainSettings settings = TrainSettings::of(spec);
    const LayerPlan plan = plan_layer(entry, spec, size, shape, task);
    TrainedModel model;
    model.mix = n_mix(task, d);
    model.plateau = std::log(static_cast<double>(plan.shape.values));
    auto memory = make_memory(entry, size, spec, shape, seed);
    const std::string budget = shape.budget_floats ? std::to_string(*shape.budget_floats) : std::string("natural");
    const auto mix_n = [&](std::int64_t i) { return model.mix[static_cast<std::size_t>(i % static_cast<std::int64_t>(model.mix.size()))]; };

    // the held-out episodes, drawn once
    std::vector<Episode> heldout(static_cast<std::size_t>(settings.heldout));
    for (int i = 0; i < settings.heldout; ++i)
        task.fill_episode(TaskCell{mix_n(i), d, seed}, Split::Train, kHeldOutBase + i, heldout[static_cast<std::size_t>(i)]);

    LayerPass pass;
    const auto evaluate = [&](const Layer& layer, double& accuracy) {
        double loss = 0;
        std::int64_t correct = 0, queries = 0;
        for (const Episode& e : heldout) {
            layer.forward(*memory, e.tokens, RowMat(), pass);
            loss += episode_loss(layer, pass, e, 1.0, correct, nullptr, nullptr);
            queries += static_cast<std::int64_t>(e.read_at.size());
        }
        accuracy = queries ? static_cast<double>(correct) / static_cast<double>(queries) : 0.0;
        return loss / static_cast<double>(heldout.size());
    };

    Episode e;
    RowMat dy;
    for (const double lr : settings.lrs) {
        Rng init = Rng::stream("train/init", spec.canonical(), budget, d, task.spec().canonical(), seed);
        Layer layer(plan.shape, plan.recipe, init);
        TrainRun run;
        run.lr = lr;
        std::vector<float>& th = layer.theta();
        const std::size_t np = th.size();
        std::vector<float> grad(np), m1(np, 0.0f), m2(np, 0.0f);
        double acc0 = 0;
        run.best_loss = evaluate(layer, acc0);
        run.theta = th;
        run.curve.push_back({0, std::numeric_limits<double>::quiet_NaN(), run.best_loss, acc0});
        int since = 0;
        double window = 0;
        int window_steps = 0;
        for (std::int64_t step = 0; step < settings.max_steps; ++step) {
            std::fill(grad.begin(), grad.end(), 0.0f);
            double loss = 0;
            for (int b = 0; b < settings.batch; ++b) {
                const std::int64_t index = step * settings.batch + b;
                task.fill_episode(TaskCell{mix_n(index), d, seed}, Split::Train, index, e);
                layer.forward(*memory, e.tokens, RowMat(), pass);
                std::int64_t correct = 0;
                loss += episode_loss(layer, pass, e, 1.0 / settings.batch, correct, &dy, &grad) / settings.batch;
                layer.backward(*memory, e.tokens, pass, dy, grad);
            }
            double norm2 = 0;
            for (float g : grad) norm2 += static_cast<double>(g) * g;
            if (!std::isfinite(loss) || !std::isfinite(norm2)) {
                run.ok = false;
                run.message = "non-finite " + std::string(std::isfinite(loss) ? "gradient" : "loss") + " at step " + std::to_string(step);
                break;
            }
            const double clip = norm2 > settings.clip * settings.clip ? settings.clip / std::sqrt(norm2) : 1.0;
            const double t = static_cast<double>(step + 1);
            const double rate = lr * std::min(1.0, t / settings.warmup);
            const auto alpha = static_cast<float>(rate * std::sqrt(1.0 - std::pow(kBeta2, t)) / (1.0 - std::pow(kBeta1, t)));
            for (std::size_t i = 0; i < np; ++i) {
                const float g = static_cast<float>(grad[i] * clip);
                m1[i] = static_cast<float>(kBeta1) * m1[i] + static_cast<float>(1.0 - kBeta1) * g;
                m2[i] = static_cast<float>(kBeta2) * m2[i] + static_cast<float>(1.0 - kBeta2) * g * g;
                th[i] -= alpha * m1[i] / (std::sqrt(m2[i]) + static_cast<float>(kAdamEps));
            }
            run.steps = step + 1;
            window += loss, ++window_steps;
            if (run.steps % settings.eval_every != 0) continue;
            double acc = 0;
            const double held = evaluate(layer, acc);
            run.curve.push_back({run.steps, window / window_steps, held, acc});
            window = 0, window_steps = 0;
            if (!std::isfinite(held)) {
                run.ok = false;
                run.message = "non-finite held-out loss at step " + std::to_string(run.steps);
                break;
            }
            if (run.left_plateau < 0 && held < model.plateau - 1.0) run.left_plateau = run.steps;
            if (held < run.best_loss) {
                run.best_loss = held, run.best_step = run.steps, run.theta = th, since = 0;
            } else if (++since >= settings.patience) {
                run.converged = true;
                break;
            }
        }
        model.runs.push_back(std::move(run));
    }
    for (std::size_t i = 0; i < model.runs.size(); ++i)
        if (model.runs[i].ok && (model.chosen < 0 || model.runs[i].best_loss < model.runs[static_cast<std::size_t>(model.chosen)].best_loss))
            model.chosen = static_cast<int>(i);
    if (model.ok()) model.layer = std::make_unique<Layer>(plan.shape, plan.recipe, model.run().theta);
    return model;
}

std::shared_ptr<const TrainedModel> cached_model(const MemoryEntry& entry, const MemorySize& size, const Spec& spec,
                                                 const MemoryShape& shape, const Task& task, int d, std::uint64_t seed) {
    const std::string budget = shape.budget_floats ? std::to_string(*shape.budget_floats) : std::string();
    const std::string key = spec.canonical() + '\x1f' + budget + '\x1f' + std::to_string(d) + '\x1f' +
                            task.spec().canonical() + '\x1f' + std::to_string(seed);
    std::shared_ptr<Slot> slot;
    {
        std::lock_guard<std::mutex> lock(cache_mutex);
        auto& s = cache()[key];
        if (!s) {
            s = std::make_shared<Slot>();
            s->memory = spec.canonical(), s->task = task.spec().canonical(), s->budget = budget, s->d = d, s->seed = seed;
        }
        slot = s;
    }
    std::call_once(slot->once, [&] {
        slot->model = std::make_shared<const TrainedModel>(train_model(entry, size, spec, shape, task, d, seed));
    });
    return slot->model;
}

CellOutcome score_trained(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                          const Task& task, const TaskCell& cell) {
    const auto model = cached_model(entry, size, spec, shape, task, cell.d, cell.seed);
    auto memory = make_memory(entry, size, spec, shape, cell.seed);
    CellOutcome out;
    out.param_floats = memory->param_floats() + (model->ok() ? model->layer->param_floats() : 0);
    out.state_floats = memory->state_floats();
    if (!model->ok()) {
        out.ok = false;
        out.message = model->summary() + " (" + model->runs.front().message + ")";
        return out;
    }
    const Layer& layer = *model->layer;
    SlotScore score;
    score.target_dist_sum = score.target_cos_sum = std::numeric_limits<double>::quiet_NaN();
    Episode e;
    LayerPass pass;
    for (std::int64_t i = 0; i < task.test_episodes(cell); ++i) {
        task.fill_episode(cell, Split::Test, i, e);
        layer.forward(*memory, e.tokens, RowMat(), pass);
        episode_loss(layer, pass, e, 1.0, score.correct, nullptr, nullptr);
        score.queries += static_cast<std::int64_t>(e.read_at.size());
    }
    out.state_floats = memory->state_floats();
    out.slots.push_back(score);
    out.message = model->summary();
    return out;
}

std::string curves_csv() {
    std::string out = "memory_spec,task_spec,budget_floats,d,seed,lr,chosen,step,train_loss,heldout_loss,heldout_accuracy\n";
    std::lock_guard<std::mutex> lock(cache_mutex);
    for (const auto& [key, slot] : cache()) {
        if (!slot->model) continue;
        const TrainedModel& m = *slot->model;
        for (std::size_t r = 0; r < m.runs.size(); ++r)
            for (const CurvePoint& c : m.runs[r].curve) {
                out += "\"" + slot->memory + "\",\"" + slot->task + "\"," + slot->budget + ',' + std::to_string(slot->d) + ',' +
                       std::to_string(slot->seed) + ',' + format_real(m.runs[r].lr) + ',' +
                       (static_cast<int>(r) == m.chosen ? "1" : "0") + ',' + std::to_string(c.step) + ',' +
                       (std::isnan(c.train_loss) ? std::string() : format_real(c.train_loss)) + ',' + format_real(c.heldout_loss) +
                       ',' + format_real(c.heldout_accuracy) + '\n';
            }
    }
    return out;
}

}  // namespace memcap::train
