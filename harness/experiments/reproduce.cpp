// memcap/harness/experiments/reproduce.cpp — see reproduce.hpp.
#include "harness/experiments/reproduce.hpp"

#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/eval/cell.hpp"
#include "harness/eval/readout.hpp"
#include "harness/exec/progress.hpp"
#include "harness/experiments/diagnostics.hpp"
#include "harness/experiments/lab000.hpp"
#include "harness/experiments/order_checks.hpp"
#include "harness/experiments/published.hpp"
#include "harness/results/atomic_file.hpp"
#include "harness/results/csv.hpp"
#include "harness/results/stats.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>

namespace memcap {
namespace {

// ---------------------------------------------------------------- the cells

// CPU seconds of the calling thread (work done, whatever else runs on the machine).
double thread_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double wall_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Where `memcap reproduce --timings` says the time went: CPU seconds per experiment
/// (summed over threads) and wall seconds per phase, in the order first seen.
class Timings {
public:
    void add(const std::string& what, double cpu) {
        if (!cpu_.count(what)) order_.push_back(what);
        cpu_[what] += cpu;
    }
    void phase(const std::string& what, double wall) { phases_.emplace_back(what, wall); }
    void print(std::ostream& os) const {
        char buf[160];
        os << "timings: CPU seconds per experiment (all threads)\n";
        double total = 0;
        for (const auto& w : order_) {
            std::snprintf(buf, sizeof buf, "  %8.3f  %s\n", cpu_.at(w), w.c_str());
            os << buf;
            total += cpu_.at(w);
        }
        std::snprintf(buf, sizeof buf, "  %8.3f  total\ntimings: wall seconds per phase\n", total);
        os << buf;
        total = 0;
        for (const auto& [w, t] : phases_) {
            std::snprintf(buf, sizeof buf, "  %8.3f  %s\n", t, w.c_str());
            os << buf;
            total += t;
        }
        std::snprintf(buf, sizeof buf, "  %8.3f  total\n", total);
        os << buf;
    }

private:
    std::vector<std::string> order_;
    std::map<std::string, double> cpu_;
    std::vector<std::pair<std::string, double>> phases_;
};

struct Block {
    std::size_t first = 0, count = 0;  // cells [first, first + count), one per seed
};

/// A piece of work run beside the cells (a diagnostic, the worked examples), labelled for the timings.
struct SideJob {
    std::string label;
    std::function<void()> run;
};

class Cells {
public:
    Block add(const std::string& memory, const std::string& task, std::int64_t n, int seeds, const std::string& experiment) {
        Block b{cells_.size(), static_cast<std::size_t>(seeds)};
        for (int s = 0; s < seeds; ++s) {
            cells_.push_back(make_cell(parse_memory_spec(memory), parse_task_spec(task), parse_readout_spec("auto"),
                                       std::nullopt, 64, n, static_cast<std::uint64_t>(s)));
            experiment_.push_back(experiment);
        }
        return b;
    }
    /// Runs the cells and, in the same pool of threads (before the cells), `jobs`: each
    /// independent of the cells and of the others, labelled for the timings.
    void run(int threads, bool progress, Timings& timings, const std::vector<SideJob>& jobs) {
        outcomes_.resize(cells_.size());
        const auto extra = static_cast<std::int64_t>(jobs.size());
        const std::int64_t items = extra + static_cast<std::int64_t>(cells_.size());
        std::vector<double> cpu(static_cast<std::size_t>(items));
        Progress bar(items, "reproduce", progress);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (std::int64_t i = 0; i < items; ++i) {
            const double t0 = thread_seconds();
            if (i < extra) jobs[static_cast<std::size_t>(i)].run();
            else outcomes_[static_cast<std::size_t>(i - extra)] = run_cell(cells_[static_cast<std::size_t>(i - extra)]);
            cpu[static_cast<std::size_t>(i)] = thread_seconds() - t0;
            bar.tick();
        }
        bar.finish();
        for (std::size_t i = 0; i < cells_.size(); ++i) timings.add(experiment_[i], cpu[i + jobs.size()]);
        for (std::size_t j = 0; j < jobs.size(); ++j) timings.add(jobs[j].label, cpu[j]);
        for (std::size_t i = 0; i < cells_.size(); ++i)
            if (!outcomes_[i].ok)
                throw std::runtime_error("reproduce: cell (" + cell_label(cells_[i]) + ") failed: " + outcomes_[i].message);
    }
    std::string csv() const {
        std::string out = cell_header();
        for (std::size_t i = 0; i < cells_.size(); ++i) out += cell_rows(outcomes_[i]);
        return out;
    }
    /// Per-seed accuracy of one slot (−1: slot-free), and the queries per seed.
    std::vector<double> accuracy(const Block& b, int slot, double* queries) const {
        std::vector<double> acc;
        for (std::size_t i = b.first; i < b.first + b.count; ++i)
            for (const auto& s : outcomes_[i].slots)
                if (s.slot == slot) {
                    acc.push_back(static_cast<double>(s.correct) / static_cast<double>(s.queries));
                    *queries = static_cast<double>(s.queries);
                }
        return acc;
    }
    /// Per-seed mean accuracy over every slot (copying's number), and the queries per seed.
    std::vector<double> slot_mean(const Block& b, double* queries) const {
        std::vector<double> acc;
        for (std::size_t i = b.first; i < b.first + b.count; ++i) {
            double sum = 0, q = 0;
            for (const auto& s : outcomes_[i].slots) sum += static_cast<double>(s.correct) / static_cast<double>(s.queries), q += static_cast<double>(s.queries);
            acc.push_back(sum / static_cast<double>(outcomes_[i].slots.size()));
            *queries = q;
        }
        return acc;
    }
    /// Per-seed mean distance from the read to the right value.
    std::vector<double> distance(const Block& b) const {
        std::vector<double> out;
        for (std::size_t i = b.first; i < b.first + b.count; ++i)
            out.push_back(outcomes_[i].slots[0].target_dist_sum / static_cast<double>(outcomes_[i].slots[0].queries));
        return out;
    }

private:
    std::vector<CellSpec> cells_;
    std::vector<std::string> experiment_;
    std::vector<CellResult> outcomes_;
};

// ---------------------------------------------------------------- the verdicts

std::string pct(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", 100 * x);
    return buf;
}

std::string num(double x, int digits = 3) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, x);
    return buf;
}

struct Row {
    const PublishedNumber* pub;
    std::string essay_text;
    double measured = 0, lo = 0, hi = 0;
    std::string verdict;
};

/// The reproduction table: each published number beside its measurement and verdict.
class Verdicts {
public:
    /// A measured summary over seeds (value, perfect, about_half, below) or of a diagnostic.
    void judge(const std::string& key, const Summary& s) {
        const PublishedNumber& p = published(key);
        const auto shown = [&](double x) { return p.percent ? pct(x) : num(x, p.digits); };
        const auto differs_by = [&](double diff) { return "differs by " + (p.percent ? pct(diff) + " points" : num(diff)); };
        const double diff = s.mean - p.value;
        switch (p.claim) {
        case Claim::value:
            add(p, shown(p.value), s.mean, s.lo, s.hi, reproduces(s, p.value, p.seeds, p.unit) ? "agrees" : differs_by(diff));
            break;
        case Claim::perfect:
            add(p, shown(p.value), s.mean, s.lo, s.hi, s.mean >= 0.99 ? "agrees" : "differs");
            break;
        case Claim::about_half:
            add(p, "about half", s.mean, s.lo, s.hi, std::abs(s.mean - 0.5) <= 0.10 ? "agrees (within 10 points of 50)" : "differs");
            break;
        case Claim::below:
            add(p, "< " + shown(p.value), s.mean, s.lo, s.hi, s.hi < p.value ? "agrees" : "differs");
            break;
        case Claim::diagnostic: {
            const double se = s.se();
            add(p, shown(p.value), s.mean, s.mean - 1.96 * se, s.mean + 1.96 * se,
                std::abs(diff) <= 3.0 * std::sqrt(2.0) * se + p.unit ? "agrees" : differs_by(diff));
            break;
        }
        case Claim::exact:
        case Claim::check:
            throw std::logic_error("Verdicts::judge: '" + key + "' is judged by judge_lab");
        }
    }
    /// A worked example (exact) or a lab check.
    void judge_lab(const LabResult& r) {
        const PublishedNumber& p = published(r.key);
        if (p.claim == Claim::check) add(p, "passes", r.passed ? 1.0 : 0.0, 0, 0, r.passed ? "agrees" : "differs");
        else add(p, num(p.value, p.digits), r.measured, r.measured, r.measured, r.passed ? "agrees" : "differs");
    }

    int disagreements() const {
        return static_cast<int>(std::count_if(rows_.begin(), rows_.end(), [](const Row& r) { return r.verdict.rfind("agrees", 0) != 0; }));
    }
    std::string csv() const {
        std::string out = "experiment,quantity,essay,measured,ci95_lo,ci95_hi,verdict\n";
        for (const auto& r : rows_)
            out += csv_field(r.pub->experiment) + "," + csv_field(r.pub->quantity) + "," + csv_field(r.essay_text) + "," +
                   format_sig(r.measured) + "," + format_sig(r.lo) + "," + format_sig(r.hi) + "," + csv_field(r.verdict) + "\n";
        return out;
    }
    std::string markdown(const std::string& command) const;

private:
    void add(const PublishedNumber& p, std::string essay_text, double measured, double lo, double hi, std::string verdict) {
        rows_.push_back({&p, std::move(essay_text), measured, lo, hi, std::move(verdict)});
    }
    std::vector<Row> rows_;
};

std::string Verdicts::markdown(const std::string& command) const {
    std::string out =
        "# Essays 000 and 004 reproduced\n\nGenerated by `" + command +
        "`; per-seed rows in `reproduce_cells.csv`, this table as CSV in `reproduction.csv`. Accuracies in %. "
        "The interval is a 95% t interval over seeds (or over trials for the diagnostics). A number *agrees* "
        "when it lies within 3 standard errors of the difference between two estimates (ours over S seeds, the "
        "essay's over its own P) plus half a unit of its last printed digit (the rule and the protocol readings: "
        "docs/PROTOCOL.md).\n\n"
        "| experiment | quantity | essay | measured | 95% interval | verdict |\n|---|---|---:|---:|---|---|\n";
    std::vector<std::string> notes;
    for (const auto& r : rows_) {
        const PublishedNumber& p = *r.pub;
        const std::string m = p.claim == Claim::check ? (r.measured > 0 ? "passes" : "fails")
                                                      : (p.percent ? pct(r.measured) : num(r.measured));
        const std::string ci = p.claim == Claim::check || r.lo == r.hi ? ""
                               : (p.percent ? pct(r.lo) + " – " + pct(r.hi) : num(r.lo) + " – " + num(r.hi));
        out += "| " + p.experiment + " | " + p.quantity + " | " + r.essay_text + " | " + m + " | " + ci + " | " + r.verdict + " |\n";
        if (r.verdict.rfind("agrees", 0) != 0 && !p.note.empty() &&
            std::find(notes.begin(), notes.end(), p.note) == notes.end())
            notes.push_back(p.note);
    }
    const int bad = disagreements();
    out += "\n" + std::to_string(rows_.size() - static_cast<std::size_t>(bad)) + " of " + std::to_string(rows_.size()) +
           " published numbers agree.";
    for (const auto& n : notes) out += " " + n;
    return out + "\n";
}

// ---------------------------------------------------------------- the experiments

constexpr int kPart3Seeds = 20;  // essay 004 Part 3: 20 memories x 32 queries
constexpr int kPart1Seeds = 5;   // the essay used one rotation (P = 1 in the table)
const std::vector<std::int64_t> kSizes = {4, 8, 16, 32, 64, 128, 256, 512};
const std::vector<std::string> kBetas = {"0", "1", "2", "4", "8", "16", "32", "64"};
const std::vector<std::string> kRhos = {"0.8", "0.9", "0.97"};
const std::vector<std::int64_t> kLengths = {5, 10, 20, 40, 60};

/// The memory/task cells of essay 004 Parts 1-3, one block of seeds per setting.
struct MemoryExperiments {
    Cells cells;
    std::vector<Block> cache, grid, hrr, shuffled, beta, lag, copy_09, copy_097, copy_cache;

    MemoryExperiments() {
        const std::string assoc = "assoc recall (cache, grid, HRR, shuffled)", copy_rnn = "copying (rotation + probe)";
        for (auto n : kSizes) cache.push_back(cells.add("softmax", "assoc_recall", n, kPart3Seeds, assoc));
        for (auto n : kSizes) grid.push_back(cells.add("linear", "assoc_recall", n, kPart3Seeds, assoc));
        for (auto n : kSizes) hrr.push_back(cells.add("hrr", "assoc_recall", n, kPart3Seeds, assoc));
        for (auto n : {4, 512})
            shuffled.push_back(cells.add("softmax", "assoc_recall:control=shuffled_query", n, kPart3Seeds, assoc));
        for (const auto& b : kBetas)
            beta.push_back(cells.add("softmax:beta=" + b, "assoc_recall:noise=0.12", 64, kPart3Seeds, "beta sweep"));
        for (const auto& r : kRhos)
            lag.push_back(cells.add("rotation:angles=haar,rho=" + r, "lag_recall", 80, kPart1Seeds, "lag recall (rotation + probe)"));
        for (auto n : kLengths) copy_09.push_back(cells.add("rotation:angles=haar,rho=0.9", "copying", n, kPart1Seeds, copy_rnn));
        for (auto n : kLengths) copy_097.push_back(cells.add("rotation:angles=haar,rho=0.97", "copying", n, kPart1Seeds, copy_rnn));
        for (auto n : kLengths)
            copy_cache.push_back(cells.add("softmax", "copying", n, kPart1Seeds, "copying (position-keyed cache)"));
    }

    Summary acc(const Block& b, int slot = -1) const {
        double q = 0;
        const auto a = cells.accuracy(b, slot, &q);
        return summarise(a, {q, true});
    }
    Summary slot_mean(const Block& b) const {
        double q = 0;
        const auto a = cells.slot_mean(b, &q);
        return summarise(a, {q, true});
    }

    /// Essay 004 Parts 2 and 3: associative recall and the beta sweep.
    void judge_recall(Verdicts& t) const {
        for (std::size_t i = 0; i < kSizes.size(); ++i) {
            const std::string n = std::to_string(kSizes[i]);
            t.judge("004.p3.cache.n=" + n, acc(cache[i]));
        }
        for (std::size_t i = 0; i < kSizes.size(); ++i) t.judge("004.p3.grid.n=" + std::to_string(kSizes[i]), acc(grid[i]));
        for (std::size_t i : {0, 2, 4, 7}) t.judge("004.p3.hrr.n=" + std::to_string(kSizes[i]), acc(hrr[i]));
        t.judge("004.p3.shuffled.n=4", acc(shuffled[0]));
        t.judge("004.p3.shuffled.n=512", acc(shuffled[1]));
        t.judge("004.p2.beta=0", acc(beta[0]));
        t.judge("004.p2.beta=2", acc(beta[2]));
        for (std::size_t i = 3; i < kBetas.size(); ++i) t.judge("004.p2.beta=" + kBetas[i], acc(beta[i]));
        t.judge("004.p2.distance.beta=4", summarise(cells.distance(beta[3])));
        for (std::size_t i = 5; i < kBetas.size(); ++i)
            t.judge("004.p2.distance.beta=" + kBetas[i], summarise(cells.distance(beta[i])));
    }

    /// Essay 004 Part 1: lag recall and copying.
    void judge_sequences(Verdicts& t) const {
        const std::string lag_key = "004.p1.lag.rho=";
        for (int l : {1, 2, 3, 8, 20}) t.judge(lag_key + "0.8.lag=" + std::to_string(l), acc(lag[0], l));
        for (int l : {1, 9, 20}) t.judge(lag_key + "0.9.lag=" + std::to_string(l), acc(lag[1], l));
        for (int l : {1, 20}) t.judge(lag_key + "0.97.lag=" + std::to_string(l), acc(lag[2], l));
        for (std::size_t i : {0, 1, 2, 4}) {
            const std::string L = std::to_string(kLengths[i]);
            t.judge("004.p1.copy.rho=0.9.L=" + L, slot_mean(copy_09[i]));
            t.judge("004.p1.copy.rho=0.97.L=" + L, slot_mean(copy_097[i]));
        }
        for (std::size_t i = 0; i < kLengths.size(); ++i)
            t.judge("004.p1.copy.cache.L=" + std::to_string(kLengths[i]), slot_mean(copy_cache[i]));
    }
};

/// Essay 004 Parts 2 and 4: the √d statistics and weight vs influence, one job per d and
/// per sigma, in parallel (each has its own stream).
struct Diagnostics {
    const std::vector<int> dims = {4, 16, 64, 256, 1024};
    const std::vector<double> sigmas = {0.0, 0.5, 1.5};
    std::vector<std::vector<SqrtDStats>> per_d;
    std::vector<InfluenceStats> influence;

    /// One job per d and per sigma, each filling its own result.
    std::vector<SideJob> jobs() {
        per_d.assign(dims.size(), {});
        influence.assign(sigmas.size(), {});
        std::vector<SideJob> out;
        for (std::size_t j = 0; j < sigmas.size(); ++j)  // the longest first
            out.push_back({"weight vs influence", [this, j] { influence[j] = weight_vs_influence(sigmas[j], 16, 32, 16.0, 2000, 0); }});
        for (std::size_t j = 0; j < dims.size(); ++j)
            out.push_back({"sqrt(d) statistics", [this, j] { per_d[j] = sqrt_d_statistics({dims[j]}, 64, 2000, 0); }});
        return out;
    }

    static Summary of(double mean, double se) {
        Summary s;
        s.count = 1, s.mean = mean, s.sd = se;  // se() = sd / √1
        return s;
    }

    /// Part 2's √d statistics.
    void judge_sqrt_d(Verdicts& t) const {
        for (const auto& v : per_d)
            for (const auto& s : v) {
                const std::string key = std::string("004.p2d.") + (s.scaled ? "scaled" : "unscaled") + ".d=" + std::to_string(s.d);
                if (!s.scaled && s.d != 4 && s.d != 1024) continue;
                t.judge(key + ".max", of(s.max_weight, s.max_weight_se));
                t.judge(key + ".entropy", of(s.entropy_nats, s.entropy_se));
                t.judge(key + ".grad", of(s.grad_proxy, s.grad_proxy_se));
            }
    }

    /// Part 4's weight vs influence.
    void judge_influence(Verdicts& t) const {
        for (std::size_t i = 0; i < sigmas.size(); ++i) {
            const InfluenceStats& r = influence[i];
            const std::string sigma = num(sigmas[i], 1);
            const double p = published("004.p4.mismatch.sigma=" + sigma).value;
            t.judge("004.p4.mismatch.sigma=" + sigma, of(r.mismatch_frac, std::sqrt(p * (1 - p) / r.layers)));
            if (sigma != "0.5") t.judge("004.p4.rank.sigma=" + sigma, of(r.spearman_mean, r.spearman_se));
        }
    }
};

/// Writes the four result files atomically (all or none).
void write_outputs(const std::string& out_dir, const std::string& cells_csv, const Verdicts& t, const std::string& command,
                   const std::vector<OrderCheck>& orders) {
    AtomicFile cells(out_dir + "/reproduce_cells.csv"), table_csv(out_dir + "/reproduction.csv"),
        table_md(out_dir + "/REPRODUCTION.md"), order_file(out_dir + "/order_checks.csv");
    cells.write(cells_csv);
    table_csv.write(t.csv());
    table_md.write(t.markdown(command) + order_markdown(orders));
    order_file.write(order_csv(orders));
    cells.commit();
    table_csv.commit();
    table_md.commit();
    order_file.commit();
}

}  // namespace

int reproduce(const std::string& out_dir, int threads, bool progress, const std::string& command, bool print_timings) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec || !std::filesystem::is_directory(out_dir))
        throw UsageError("--out: cannot create directory '" + out_dir + "'" + (ec ? ": " + ec.message() : ""));
    check_writable(out_dir + "/reproduction.csv");

    Timings timings;
    double wall = wall_seconds();
    const auto phase_done = [&](const std::string& what) {
        const double now = wall_seconds();
        timings.phase(what, now - wall);
        wall = now;
    };
    // The diagnostics, the worked examples and the order checks run in the cells' pool.
    MemoryExperiments memory;
    Diagnostics diagnostics;
    std::vector<LabResult> lab;
    std::vector<OrderCheck> orders;
    std::vector<SideJob> jobs = diagnostics.jobs();
    jobs.push_back({"worked examples and lab", [&lab] { lab = run_lab(); }});
    jobs.push_back({"paired permutation on every backend", [&orders] { orders = order_checks(); }});
    memory.cells.run(threads, progress, timings, jobs);
    phase_done("memory/task cells, diagnostics, examples, order checks");

    Verdicts t;
    memory.judge_recall(t);
    diagnostics.judge_sqrt_d(t);
    memory.judge_sequences(t);
    diagnostics.judge_influence(t);
    for (const auto& r : lab) t.judge_lab(r);

    write_outputs(out_dir, memory.cells.csv(), t, command, orders);
    phase_done("tables and files");
    if (print_timings) timings.print(std::cerr);
    return t.disagreements();
}

}  // namespace memcap
