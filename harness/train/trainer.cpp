// memcap/harness/train/trainer.cpp — see trainer.hpp.
#include "harness/train/trainer.hpp"

#include "core/error.hpp"
#include "core/seeds.hpp"
#include "tasks/registry.hpp"
#include "memories/precision.hpp"

#include <algorithm>
#include <dlfcn.h>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

namespace memcap::train {
namespace {

constexpr std::int64_t kHeldOutBase = std::int64_t{1} << 40;  // held-out episodes' indices (Split::Train)
constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kAdamEps = 1e-8;

std::string fmt(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", x);
    return buf;
}

/// Hands the allocator's free pages back to the kernel, where the allocator is jemalloc (the
/// memcap binary, harness/cli/allocator.hpp, keeps freed pages for the next cell: dirty decay
/// off). A training run allocates and frees buffers of every episode length of its mix thousands
/// of times, and jemalloc does not reuse those freed pages for the next sizes: a run on
/// assoc_recall (n = 4 … 256) grew by about 1 GB per 600 steps, and a study's two threads ran this
/// machine (24 GiB) out of memory. Called at every held-out evaluation (each 50 steps), it keeps
/// a run within tens of MB; elsewhere (glibc, the sanitizers) it does nothing.
void release_free_pages() {
    using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
    static const auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
    if (mallctl) mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);  // 4096: MALLCTL_ARENAS_ALL
}

/// The largest n of a training mix (a vector task poses any n; its streams are n + queries tokens long).
constexpr std::int64_t kMaxMixN = 256;

/// The n of the training mix: powers of two from 4 (1 when the task holds fewer) to the largest n `task` poses at d, at most kMaxMixN.
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
    for (std::int64_t n = 1; n <= kMaxMixN && poses(n); n *= 2) top = n;
    if (top == 0) throw UsageError("task '" + task.spec().canonical() + "' poses no n at d=" + std::to_string(d) + " to train on");
    std::vector<std::int64_t> mix;
    for (std::int64_t n = std::min<std::int64_t>(4, top); n <= top; n *= 2) mix.push_back(n);
    return mix;
}

struct Slot {
    std::once_flag once;
    std::shared_ptr<const TrainedModel> model;
};
std::mutex cache_mutex;
std::map<std::string, std::shared_ptr<Slot>>& cache() {
    static std::map<std::string, std::shared_ptr<Slot>> c;
    return c;
}

}  // namespace

void to_sequence(const Episode& e, Sequence& s) {
    s.positions.clear();
    s.targets.assign(e.target.begin(), e.target.end());
    if (!e.tokens.empty()) {
        s.tokens.assign(e.tokens.begin(), e.tokens.end());
        for (const int r : e.read_at) s.positions.push_back(r + 1);
        s.inputs.resize(0, 0), s.candidates.resize(0, 0);
        return;
    }
    s.tokens.clear();
    const Eigen::Index n = e.keys.rows(), m = e.queries.rows(), dk = e.keys.cols(), dv = e.values.cols();
    s.inputs.setZero(n + m, dk + dv);
    s.inputs.topLeftCorner(n, dk) = e.keys;
    s.inputs.topRightCorner(n, dv) = e.values;
    s.inputs.bottomLeftCorner(m, dk) = e.queries;
    for (Eigen::Index j = 0; j < m; ++j) s.positions.push_back(static_cast<int>(n + j));
    s.candidates = e.candidates;
}

double sequence_loss(const Layer& layer, const LayerPass& p, const Sequence& s, double scale, std::int64_t& correct,
                     RowMat* dy, std::vector<float>* grad) {
    const bool symbols = layer.shape().values > 0;
    const auto head = symbols ? layer.head() : Eigen::Map<const RowMat>(nullptr, 0, p.y.cols());
    const Eigen::Index m = static_cast<Eigen::Index>(s.positions.size());
    if (dy) dy->setZero(p.y.rows(), p.y.cols());
    const float inv_temp = static_cast<float>(1.0 / kCandidateTemperature);
    Vec sq;
    if (!symbols) sq = s.candidates.rowwise().squaredNorm();
    double loss = 0;
    Vec logits;
    for (Eigen::Index i = 0; i < m; ++i) {
        const Eigen::Index pos = s.positions[static_cast<std::size_t>(i)];
        const int target = s.targets[static_cast<std::size_t>(i)];
        if (symbols) logits.noalias() = head * p.y.row(pos).transpose();
        else logits = ((2.0f * (s.candidates * p.y.row(pos).transpose())) - sq) * inv_temp;  // −‖y − c‖²/τ + const
        Eigen::Index best = 0;
        const float peak = logits.maxCoeff(&best);
        if (best == target) ++correct;
        const double margin = static_cast<double>(logits(target)) - peak;  // log-sum-exp: no log(0)
        logits = (logits.array() - peak).exp();
        const double total = logits.sum();
        loss += std::log(total) - margin;
        if (dy) {
            logits /= static_cast<float>(total);
            logits(target) -= 1.0f;  // p − y
            const float w = static_cast<float>(scale / static_cast<double>(m));
            if (symbols) {
                dy->row(pos).noalias() += w * (logits.transpose() * head);
                layer.block(*grad, "head").noalias() += w * logits * p.y.row(pos);
            } else {  // ∂/∂y of −‖y − c_j‖²/τ is 2 (c_j − y)/τ, and Σ_j (p − y)_j = 0
                dy->row(pos).noalias() += (2.0f * inv_temp * w) * (logits.transpose() * s.candidates);
            }
        }
    }
    return loss / static_cast<double>(std::max<Eigen::Index>(m, 1));
}

bool trained(const Spec& memory) { return memory.has(kTrainKey) && memory.text(kTrainKey) == "layer"; }

TrainSettings TrainSettings::of(const Spec& memory) {
    TrainSettings s;
    if (memory.has(kTrainLrKey)) s.lrs = {memory.real(kTrainLrKey)};
    if (memory.has(kTrainStepsKey)) s.max_steps = memory.integer(kTrainStepsKey);
    return s;
}

std::string TrainedModel::summary() const {
    if (!ok()) return "trained: failed";
    const TrainRun& r = run();
    return "trained: lr=" + fmt(r.lr) + (tuned ? " lr_from=tuning_seed" : "") + (r.converged ? " converged" : " not_converged") + " steps=" + std::to_string(r.steps) +
           " best_step=" + std::to_string(r.best_step) + " heldout_loss=" + fmt(r.best_loss) + " plateau=" + fmt(r.plateau) +
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
    if (task.token_vocab() > 0) return;
    std::string why;
    if (task.hops() > 1) why = "chains its reads";
    else if (task.has_absent()) why = "asks for keys never written";
    else if (task.hides_pairs()) why = "hides pairs from its reads";
    else if (task.key_training()) why = "trains its own keys (keys=learned)";
    else if (task.has_slots()) why = "reports its reads per slot";
    else if (!task.native_read_reason().empty()) why = task.native_read_reason();
    if (!why.empty())
        throw UsageError(what + "trains on token streams and on vector tasks that write, then read; task '" +
                         task.spec().canonical() + "' " + why);
}

LayerPlan plan_layer(const MemoryEntry& entry, const Spec& spec, const MemorySize& size, const MemoryShape& shape,
                     const Task& task) {
    LayerPlan plan;
    plan.recipe = LayerRecipe::for_memory(entry);
    (void)spec;
    LayerShape& s = plan.shape;
    s.d = shape.d_key;
    s.d_out = shape.d_value;
    s.vocab = task.token_vocab();
    s.values = s.vocab - s.vocab / 2;
    s.d_in = s.vocab > 0 ? shape.d_key : shape.d_key + shape.d_value;  // a vector task's tokens: [k; v] and [q; 0]
    s.channels = 1;
    for (const auto& dim : size.dims)
        if (dim.first == "d_phi") s.channels = static_cast<int>(dim.second);
    if (plan.recipe.decay != LayerRecipe::Decay::none && plan.recipe.decay != LayerRecipe::Decay::scalar_softplus &&
        s.channels <= 0)
        s.channels = shape.d_key;
    return plan;
}

namespace {

/// The training episodes' mix, plateau and held-out set of (task, d, seed): what every learning
/// rate's run of that seed shares.
struct RunInputs {
    std::vector<std::int64_t> mix;
    double plateau = 0;
};

RunInputs run_inputs(const Task& task, int d, std::uint64_t seed) {
    RunInputs in;
    in.mix = n_mix(task, d);
    const Episode first = task.episode(TaskCell{in.mix.back(), d, seed}, Split::Train, kHeldOutBase);
    in.plateau = std::log(static_cast<double>(first.candidates.rows()));  // at the mix's largest n for a vector task
    return in;
}

}  // namespace

TrainRun train_run(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                   const Task& task, int d, std::uint64_t seed, double lr) {
    const TrainSettings settings = TrainSettings::of(spec);
    const LayerPlan plan = plan_layer(entry, spec, size, shape, task);
    const RunInputs in = run_inputs(task, d, seed);
    auto memory = make_memory(entry, size, spec, shape, seed);
    const std::string budget = shape.budget_floats ? std::to_string(*shape.budget_floats) : std::string("natural");
    const auto mix_n = [&](std::int64_t i) { return in.mix[static_cast<std::size_t>(i % static_cast<std::int64_t>(in.mix.size()))]; };

    // the held-out episodes, drawn once
    std::vector<Sequence> heldout(static_cast<std::size_t>(settings.heldout));
    Episode e;
    for (int i = 0; i < settings.heldout; ++i) {
        task.fill_episode(TaskCell{mix_n(i), d, seed}, Split::Train, kHeldOutBase + i, e);
        to_sequence(e, heldout[static_cast<std::size_t>(i)]);
    }

    LayerPass pass;
    const auto evaluate = [&](const Layer& layer, double& accuracy) {
        double loss = 0;
        std::int64_t correct = 0, queries = 0;
        for (const Sequence& q : heldout) {
            layer.forward(*memory, q.tokens, q.inputs, pass);
            loss += sequence_loss(layer, pass, q, 1.0, correct, nullptr, nullptr);
            queries += static_cast<std::int64_t>(q.positions.size());
        }
        accuracy = queries ? static_cast<double>(correct) / static_cast<double>(queries) : 0.0;
        return loss / static_cast<double>(heldout.size());
    };

    Sequence seq;
    RowMat dy;
    Rng init = Rng::stream("train/init", spec.canonical(), budget, d, task.spec().canonical(), seed);
    Layer layer(plan.shape, plan.recipe, init);
    TrainRun run;
    run.lr = lr;
    run.plateau = in.plateau;
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
            to_sequence(e, seq);
            layer.forward(*memory, seq.tokens, seq.inputs, pass, /*for_backward=*/true);
            std::int64_t correct = 0;
            loss += sequence_loss(layer, pass, seq, 1.0 / settings.batch, correct, &dy, &grad) / settings.batch;
            layer.backward(*memory, seq.tokens, pass, dy, grad);
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
        release_free_pages();
        double acc = 0;
        const double held = evaluate(layer, acc);
        run.curve.push_back({run.steps, window / window_steps, held, acc});
        window = 0, window_steps = 0;
        if (!std::isfinite(held)) {
            run.ok = false;
            run.message = "non-finite held-out loss at step " + std::to_string(run.steps);
            break;
        }
        if (run.left_plateau < 0 && held < in.plateau - 1.0) run.left_plateau = run.steps;
        if (held < run.best_loss) {
            run.best_loss = held, run.best_step = run.steps, run.theta = th, since = 0;
        } else if (run.left_plateau >= 0 && ++since >= settings.patience) {  // on the plateau: never stopped early
            run.converged = true;
            break;
        }
    }
    return run;
}

namespace {

/// The cache key of (memory spec, budget, d, task spec) — a group — and of one of its runs.
std::string group_key(const Spec& spec, const MemoryShape& shape, const Task& task, int d) {
    const std::string budget = shape.budget_floats ? std::to_string(*shape.budget_floats) : std::string();
    return spec.canonical() + '\x1f' + budget + '\x1f' + std::to_string(d) + '\x1f' + task.spec().canonical();
}

struct RunSlot {
    std::once_flag once;
    std::shared_ptr<const TrainRun> run;
    std::string memory, task, budget;
    int d = 0;
    std::uint64_t seed = 0;
    double lr = 0;
    std::atomic<bool> kept{false};  // some model keeps this run (the curves' `chosen`)
};
std::map<std::tuple<std::string, std::uint64_t, double>, std::shared_ptr<RunSlot>>& runs() {
    static std::map<std::tuple<std::string, std::uint64_t, double>, std::shared_ptr<RunSlot>> c;
    return c;
}

std::shared_ptr<RunSlot> cached_run(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                                    const Task& task, int d, std::uint64_t seed, double lr) {
    std::shared_ptr<RunSlot> slot;
    {
        std::lock_guard<std::mutex> lock(cache_mutex);
        auto& s = runs()[{group_key(spec, shape, task, d), seed, lr}];
        if (!s) {
            s = std::make_shared<RunSlot>();
            s->memory = spec.canonical(), s->task = task.spec().canonical(), s->d = d, s->seed = seed, s->lr = lr;
            s->budget = shape.budget_floats ? std::to_string(*shape.budget_floats) : std::string("natural");
        }
        slot = s;
    }
    std::call_once(slot->once, [&] {
        slot->run = std::make_shared<const TrainRun>(train_run(entry, size, spec, shape, task, d, seed, lr));
    });
    return slot;
}

}  // namespace

std::optional<double> tuned_lr(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                               const Task& task, int d, std::string* why) {
    const TrainSettings settings = TrainSettings::of(spec);
    if (settings.lrs.size() == 1) return settings.lrs.front();
    std::shared_ptr<RunSlot> best;
    std::string failures;
    for (const double lr : settings.lrs) {
        auto slot = cached_run(entry, size, spec, shape, task, d, kTuningSeedBase, lr);
        if (!slot->run->ok) {
            failures += (failures.empty() ? "" : "; ") + ("lr=" + fmt(lr) + ": " + slot->run->message);
            continue;
        }
        if (!best || slot->run->best_loss < best->run->best_loss) best = slot;  // ties: the first
    }
    if (!best) {
        if (why) *why = "every learning rate failed on the tuning seed (" + failures + ")";
        return std::nullopt;
    }
    best->kept = true;
    return best->lr;
}

TrainedModel train_model(const MemoryEntry& entry, const MemorySize& size, const Spec& spec, const MemoryShape& shape,
                         const Task& task, int d, std::uint64_t seed) {
    TrainedModel model;
    model.mix = n_mix(task, d);
    model.tuned = TrainSettings::of(spec).lrs.size() > 1;
    std::string why;
    const std::optional<double> lr = tuned_lr(entry, size, spec, shape, task, d, &why);
    if (!lr) {
        TrainRun failed;
        failed.ok = false;
        failed.message = why;
        failed.plateau = run_inputs(task, d, seed).plateau;
        model.runs.push_back(std::move(failed));
        return model;
    }
    auto slot = cached_run(entry, size, spec, shape, task, d, seed, *lr);
    model.runs.push_back(*slot->run);
    if (slot->run->ok) {
        slot->kept = true;
        model.chosen = 0;
        const LayerPlan plan = plan_layer(entry, spec, size, shape, task);
        model.layer = std::make_unique<Layer>(plan.shape, plan.recipe, model.run().theta);
    }
    return model;
}

std::shared_ptr<const TrainedModel> cached_model(const MemoryEntry& entry, const MemorySize& size, const Spec& spec,
                                                 const MemoryShape& shape, const Task& task, int d, std::uint64_t seed) {
    const std::string key = group_key(spec, shape, task, d) + '\x1f' + std::to_string(seed);
    std::shared_ptr<Slot> slot;
    {
        std::lock_guard<std::mutex> lock(cache_mutex);
        auto& s = cache()[key];
        if (!s) s = std::make_shared<Slot>();
        slot = s;
    }
    std::call_once(slot->once, [&] {
        slot->model = std::make_shared<const TrainedModel>(train_model(entry, size, spec, shape, task, d, seed));
    });
    return slot->model;
}

void prepare(const std::vector<ModelRequest>& requests, int threads, const std::atomic<bool>& stop,
             const std::function<void(std::size_t runs)>& begin, const std::function<void()>& done_one) {
    if (requests.empty()) return;
    // the jobs: (request, rate) on the tuning seed, then (request) at its seed; each key once
    struct Job {
        const ModelRequest* request;
        double lr;  // phase 1: the rate; phase 2: unused
    };
    std::vector<Job> tuning, models;
    std::set<std::string> seen_groups, seen_models;
    for (const ModelRequest& r : requests) {
        const auto task = make_task(r.task);
        const std::string group = group_key(r.memory, r.shape, *task, r.d);
        const TrainSettings settings = TrainSettings::of(r.memory);
        if (settings.lrs.size() > 1 && seen_groups.insert(group).second)
            for (const double lr : settings.lrs) tuning.push_back({&r, lr});
        if (seen_models.insert(group + '\x1f' + std::to_string(r.seed)).second) models.push_back({&r, 0.0});
    }
    if (begin) begin(tuning.size() + models.size());
    const auto phase = [&](const std::vector<Job>& jobs, bool tune) {
        const auto count = static_cast<std::int64_t>(jobs.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(threads, 1))
        for (std::int64_t j = 0; j < count; ++j) {
            if (stop.load()) continue;
            const Job& job = jobs[static_cast<std::size_t>(j)];
            const ModelRequest& r = *job.request;
            try {
                const auto task = make_task(r.task);
                if (tune) cached_run(*r.entry, r.size, r.memory, r.shape, *task, r.d, kTuningSeedBase, job.lr);
                else cached_model(*r.entry, r.size, r.memory, r.shape, *task, r.d, r.seed);
            } catch (...) {  // the cells train it again and report what it throws
            }
            if (done_one) done_one();
        }
    };
    phase(tuning, true);
    phase(models, false);
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
    Sequence seq;
    LayerPass pass;
    for (std::int64_t i = 0; i < task.test_episodes(cell); ++i) {
        task.fill_episode(cell, Split::Test, i, e);
        to_sequence(e, seq);
        layer.forward(*memory, seq.tokens, seq.inputs, pass);
        sequence_loss(layer, pass, seq, 1.0, score.correct, nullptr, nullptr);
        score.queries += static_cast<std::int64_t>(seq.positions.size());
    }
    out.state_floats = memory->state_floats();
    out.slots.push_back(score);
    out.message = model->summary();
    return out;
}

std::string curves_csv() {
    std::string out = "memory_spec,task_spec,budget_floats,d,seed,lr,chosen,step,train_loss,heldout_loss,heldout_accuracy\n";
    std::lock_guard<std::mutex> lock(cache_mutex);
    for (const auto& [key, slot] : runs()) {
        if (!slot->run) continue;
        for (const CurvePoint& c : slot->run->curve) {
            out += "\"" + slot->memory + "\",\"" + slot->task + "\"," + slot->budget + ',' + std::to_string(slot->d) + ',' +
                   std::to_string(slot->seed) + ',' + format_real(slot->lr) + ',' + (slot->kept ? "1" : "0") + ',' +
                   std::to_string(c.step) + ',' + (std::isnan(c.train_loss) ? std::string() : format_real(c.train_loss)) + ',' +
                   format_real(c.heldout_loss) + ',' + format_real(c.heldout_accuracy) + '\n';
        }
    }
    return out;
}

}  // namespace memcap::train
