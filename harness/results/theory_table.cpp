// memcap/harness/results/theory_table.cpp — see theory_table.hpp.
#include "harness/results/theory_table.hpp"

#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/results/csv.hpp"
#include "memories/theory.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

namespace memcap {
namespace {

const std::vector<Column>& prediction_columns() {
    static const std::vector<Column> columns = {
        {"memory_spec", "the summary row's memory"},
        {"task_spec", "the summary row's task"},
        {"budget_floats", "the budget; empty = natural size"},
        {"state_floats", "state floats the memory held"},
        {"d", "code width"},
        {"n", "stored pairs (= candidates)"},
        {"slot", "chain_recall: the hop (the model compounds the one-hop model over it); empty for assoc_recall", true},
        {"tuned", "what was chosen on tuning seeds; empty: the fixed-d frame"},
        {"frame", "frontier (the width chosen on tuning seeds: tuned non-empty) or fixed (the width given)"},
        {"noise_sigma", "query noise per entry at this d (0: none)"},
        {"model", "hrr_recall, grid_recall or cache_recall (memories/theory.hpp); on chain_recall rows followed by chain_cleanup_accuracy"},
        {"applies", "exact, equivalent, approx or no (see theory_table.hpp)"},
        {"note", "why the model does not apply, or what it assumes"},
        {"model_accuracy_frac", "the model's accuracy; empty when applies = no"},
        {"measured_mean_frac", "the summary's mean accuracy over seeds"},
        {"measured_se_frac", "its standard error: the summary's accuracy_se_frac"},
        {"residual_points", "100 (model - measured)"},
        {"residual_se", "residual / standard error"},
    };
    return columns;
}

const std::vector<Column>& capacity_columns() {
    static const std::vector<Column> columns = {
        {"memory", "backend family: softmax, linear or hrr"},
        {"model", "the model of memories/theory.hpp"},
        {"noise", "the task's noise setting: cosine=1 (none), cosine=C or noise=SIGMA"},
        {"budget_floats", "floats of state"},
        {"capacity_n", "largest power-of-two n (from 4) with model accuracy >= threshold; empty: not even 4"},
        {"d", "the width that gives it"},
        {"beta", "the cache's beta that gives it (empty for other models)"},
        {"model_accuracy_frac", "the model's accuracy at capacity_n"},
        {"widths", "the widths searched"},
        {"note", "what the line assumes"},
    };
    return columns;
}

/// key=value pairs of a spec string (core/spec.hpp's split_spec); errors name `where`.
std::map<std::string, std::string> spec_params(const std::string& spec, const std::string& where) {
    try {
        const RawSpec raw = split_spec(spec, "summary");
        return {raw.pairs.begin(), raw.pairs.end()};
    } catch (const UsageError& e) {
        throw UsageError(where + ": " + e.what());
    }
}

std::string name_of(const std::string& spec) { return spec.substr(0, spec.find(':')); }

/// The spec parameter `key` as a number, or `fallback` when the spec does not set it.
double spec_real(const std::map<std::string, std::string>& p, const std::string& key, double fallback,
                 const std::string& where) {
    const auto it = p.find(key);
    return it == p.end() ? fallback : parse_real(it->second, where + ": " + key);
}

std::int64_t int_field(const std::string& text, const std::string& column, const std::string& where) {
    const std::int64_t v = parse_int(text, where + ": " + column);
    if (v < 1) throw UsageError(where + ": " + column + " '" + text + "' is not a positive integer");
    return v;
}

double real_field(const std::string& text, const std::string& column, const std::string& where) {
    return parse_real(text, where + ": " + column);
}

/// The task's query noise: per-entry σ, or a cosine (σ then depends on d).
struct Noise {
    double sigma = 0, cosine = 1;
    std::string label() const {
        if (sigma > 0) return "noise=" + format_sig(sigma);
        return "cosine=" + format_sig(cosine);
    }
    double sigma_at(int d) const { return cosine < 1 ? std::sqrt((1 / (cosine * cosine) - 1) / d) : sigma; }
    bool operator<(const Noise& o) const { return std::tie(sigma, cosine) < std::tie(o.sigma, o.cosine); }
};

/// HRR at trace size D = d with query noise σ per entry: the model's scores, with the
/// noise direction's crosstalk (n + 1)/D on every score and the target at ρ (header).
double hrr_noisy(std::int64_t n, std::int64_t D, double sigma) {
    if (sigma <= 0) return theory::hrr_recall(n, D, n);
    const double rho = 1 / std::sqrt(1 + sigma * sigma * static_cast<double>(D));
    const auto m = theory::hrr_moments(n, D);
    const double extra = (1 - rho * rho) * static_cast<double>(n + 1) / static_cast<double>(D);
    return theory::wta_recall(rho * m.signal_mean, std::sqrt(rho * rho * m.target_var + extra),
                              std::sqrt(rho * rho * m.other_var + extra), static_cast<double>(n));
}

/// body(i) for i in [0, count) on `threads` threads, in any order; the exception of the
/// lowest i that threw, if any, is rethrown after all have run (none escapes the region).
template <class Body>
void parallel_for(std::int64_t count, int threads, const Body& body) {
    std::vector<std::exception_ptr> failed(static_cast<std::size_t>(count));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t i = 0; i < count; ++i) {
        try {
            body(static_cast<std::size_t>(i));
        } catch (...) {
            failed[static_cast<std::size_t>(i)] = std::current_exception();
        }
    }
    for (const auto& e : failed)
        if (e) std::rethrow_exception(e);
}

/// Every cache_recall, grid_recall and HRR call once (they cost 0.01–1 s; rows of
/// different budgets often share n, d, β and σ). While recording, a call only notes what it needs
/// (and returns NaN); evaluate() then computes the noted calls in parallel. Each is a
/// pure function of its arguments, so the values do not depend on the threads.
class MarginModels {
public:
    double cache(std::int64_t n, int d, double beta, double sigma) { return get({n, d, beta, sigma}); }
    double grid(std::int64_t n, int d, double sigma) { return get({n, d, kGrid, sigma}); }
    double hrr(std::int64_t n, int D, double sigma) { return get({n, D, kHrr, sigma}); }

    void record(bool on) { recording_ = on; }
    void evaluate(int threads) {
        const std::vector<Key> keys(pending_.begin(), pending_.end());
        std::vector<double> values(keys.size());
        parallel_for(static_cast<std::int64_t>(keys.size()), threads,
                     [&](std::size_t i) { values[i] = compute(keys[i]); });
        for (std::size_t i = 0; i < keys.size(); ++i) {
            std::promise<double> ready;
            ready.set_value(values[i]);
            memo_[keys[i]] = ready.get_future().share();
        }
        pending_.clear();
    }

private:
    using Key = std::tuple<std::int64_t, int, double, double>;  // n, d (HRR: D), β or the model's tag, σ
    static constexpr double kGrid = -1, kHrr = -2;
    static double compute(const Key& k) {
        const auto& [n, d, beta, sigma] = k;
        if (beta == kHrr) return hrr_noisy(n, d, sigma);
        return beta == kGrid ? theory::grid_recall(n, d, sigma) : theory::cache_recall(n, d, beta, sigma);
    }
    double get(const Key& key) {  // safe from several threads (the capacity lines)
        std::unique_lock<std::mutex> lock(mutex_);
        const auto it = memo_.find(key);
        if (it != memo_.end()) {  // computed, or being computed by another thread
            const std::shared_future<double> value = it->second;
            lock.unlock();
            return value.get();
        }
        if (recording_) {
            pending_.insert(key);
            return std::numeric_limits<double>::quiet_NaN();
        }
        std::promise<double> promise;
        const std::shared_future<double> value = promise.get_future().share();
        memo_.emplace(key, value);
        lock.unlock();  // other keys go ahead meanwhile; this one waits for us
        try {
            promise.set_value(compute(key));
        } catch (...) {
            promise.set_exception(std::current_exception());
        }
        return value.get();
    }
    std::mutex mutex_;
    std::map<Key, std::shared_future<double>> memo_;
    std::set<Key> pending_;
    bool recording_ = false;
};

std::string frac(double x) { return format_sig(x); }

const std::vector<double> kBetas = {4, 8, 16, 32, 64, 128};
constexpr int kCacheWidthMin = 4, kCacheWidthMax = 64;
constexpr std::int64_t kSmallestN = 4;

struct CapacityLine {
    std::optional<std::int64_t> n;
    int d = 0;
    double beta = 0, accuracy = 0;
};

/// Largest n = 4, 8, … ≤ limit with accuracy(n) ≥ threshold, scanning upward to the first miss.
template <class F>
std::optional<std::pair<std::int64_t, double>> scan_up(std::int64_t limit, double threshold, F accuracy) {
    std::optional<std::pair<std::int64_t, double>> best;
    for (std::int64_t n = kSmallestN; n <= limit; n *= 2) {
        const double a = accuracy(n);
        if (a < threshold) break;
        best = std::make_pair(n, a);
    }
    return best;
}

/// The same by bisection over n = 4, 8, …, limit, for a model whose accuracy falls with n.
template <class F>
std::optional<std::pair<std::int64_t, double>> bisect_down(std::int64_t limit, double threshold, F accuracy) {
    int fail = 2;
    while ((std::int64_t{1} << (fail + 1)) <= limit) ++fail;  // the largest exponent
    const double top = accuracy(std::int64_t{1} << fail);
    if (top >= threshold) return std::make_pair(std::int64_t{1} << fail, top);
    std::optional<std::pair<std::int64_t, double>> best;
    int ok = 1;  // below n = 4
    while (fail - ok > 1) {
        const int mid = (ok + fail) / 2;
        const double a = accuracy(std::int64_t{1} << mid);
        if (a >= threshold) ok = mid, best = std::make_pair(std::int64_t{1} << mid, a);
        else fail = mid;
    }
    return best;
}

}  // namespace

TheoryTables theory_tables(const TheoryOptions& o) {
    const std::string where = "input '" + o.summary_path + "'";
    std::ifstream in(o.summary_path);
    if (!in) throw UsageError(where + ": cannot open for reading");
    std::string line;
    if (!std::getline(in, line)) throw UsageError(where + ": empty, not a memcap summary CSV");
    if (line.find(",seed,") != std::string::npos && line.find(",seeds,") == std::string::npos)
        throw UsageError(where + ": per-seed rows (`run` or `sweep` output); give its summary, `memcap aggregate " +
                         o.summary_path + " --out SUMMARY.csv`");
    const CsvColumns col(line, summary_columns(), where);

    std::vector<std::string> lines;
    while (std::getline(in, line)) lines.push_back(line);

    // Two passes over the rows: the first notes every model call the rows need, those
    // run in parallel, and the second writes the rows from the results.
    MarginModels models;
    std::string predictions = header_line(prediction_columns());
    std::set<Noise> noises;
    std::set<std::int64_t> budgets;
    const auto rows = [&](bool record) {
        models.record(record);
        std::size_t lineno = 1;
        for (const std::string& text : lines) {
            ++lineno;
            if (text.empty()) continue;
            const auto f = split_csv_line(text);
            const std::string at = where + " line " + std::to_string(lineno);
            if (f.size() != col.count())
                throw UsageError(at + ": " + std::to_string(f.size()) + " fields, expected " + std::to_string(col.count()));
            const std::string& task = f[col["task_spec"]];
            if (name_of(task) != "assoc_recall" && name_of(task) != "chain_recall") continue;
            const auto tp = spec_params(task, at);
            if (tp.count("control") && tp.at("control") != "none") continue;
            if (tp.count("absent")) continue;  // the models score present queries of a task without absent ones
            // chain_recall with cleanup: the one-hop model compounded over the row's hop
            // (theory::chain_cleanup_accuracy); without cleanup the hops are not independent
            // (the composition of measured one-hop curves is in scripts/memcap_report/chains.py).
            int hop = 0;
            if (name_of(task) == "chain_recall") {
                if (!tp.count("cleanup") || tp.at("cleanup") != "nearest") continue;
                hop = static_cast<int>(int_field(f[col["slot"]], "slot", at));
            }
            Noise noise;
            noise.sigma = spec_real(tp, "noise", 0, at);
            noise.cosine = spec_real(tp, "cosine", 1, at);
            if (noise.cosine <= 0 || noise.cosine > 1) throw UsageError(at + ": cosine=" + tp.at("cosine") + " is not in (0, 1]");
            const std::string& memory = f[col["memory_spec"]];
            const std::string family = name_of(memory);
            if (family != "softmax" && family != "linear" && family != "hrr") continue;
            if (name_of(f[col["readout"]]) != "native") continue;  // the models describe each memory's own read
            const auto mp = spec_params(memory, at);
            const std::string& budget_text = f[col["budget_floats"]];
            const std::optional<std::int64_t> budget =
                budget_text.empty() ? std::nullopt : std::optional<std::int64_t>(int_field(budget_text, "budget_floats", at));
            const int d = static_cast<int>(int_field(f[col["d"]], "d", at));
            const std::int64_t n = int_field(f[col["n"]], "n", at);
            const double sigma = noise.sigma_at(d);
            if (hop == 0) {  // capacity lines are for one-hop recall
                noises.insert(noise);
                if (budget) budgets.insert(*budget);
            }

            std::string model, applies = "no", note;
            std::optional<double> p;
            // keys over a vocabulary (theory.hpp section 4): random rows are fresh random keys
            // to every model; a tight frame has the grid's keyset model; learned keys none
            const std::string keys = tp.count("keys") ? tp.at("keys") : "random";
            const std::int64_t vocab = tp.count("vocab") ? parse_int(tp.at("vocab"), at + ": vocab") : 0;
            if (keys == "learned") {
                model = family == "hrr" ? "hrr_recall" : family == "linear" ? "grid_recall" : "cache_recall";
                note = "keys=learned: no model of a trained key set";
            } else if (keys == "frame" && family != "linear") {
                model = family == "hrr" ? "hrr_recall" : "cache_recall";
                note = "keys=frame: a model of the frame exists for the grid only";
            } else if (keys == "frame") {
                model = "keyset_grid_recall";
                const std::int64_t d_phi = budget ? *budget / d : d;
                const std::string phi = mp.count("phi") ? mp.at("phi") : "proj";
                if (phi != "proj" || d_phi < d || n < 2) {
                    note = "keys=frame: the keyset model is of the linear grid with d_phi >= d (proj), n >= 2";
                } else {
                    applies = "approx";
                    note = "Gaussian crosstalk of n of a tight frame of V = " + std::to_string(vocab) + " (theory.hpp section 4)";
                    p = theory::keyset_grid_recall(n, d, theory::keyset_crosstalk(n, d, vocab, true), sigma);
                }
            } else if (family == "hrr") {
                model = "hrr_recall";
                const std::int64_t D = budget ? *budget : d;
                if (D != d) {
                    note = "trace D = " + std::to_string(D) + " != d: keys and values enter through random maps";
                } else if (d < 2) {
                    note = "D < 2";
                } else if (sigma > 0) {
                    applies = "approx", note = "query noise added to the model as crosstalk (n + 1)/D, target at the cosine";
                    p = models.hrr(n, static_cast<int>(D), sigma);
                } else {
                    applies = "exact";
                    p = models.hrr(n, static_cast<int>(D), 0);  // hrr_noisy at σ = 0 is hrr_recall(n, D, n)
                }
            } else if (family == "linear") {
                model = "grid_recall";
                const std::int64_t d_phi = budget ? *budget / d : d;
                const std::string phi = mp.count("phi") ? mp.at("phi") : "proj";
                if (d < 4) {
                    note = "d < 4";
                } else if (phi != "proj") {
                    note = "phi=" + phi + " features: not the model's linear grid";
                } else if (d_phi == d) {
                    applies = "exact", p = models.grid(n, d, sigma);
                } else if (d_phi > d) {
                    applies = "equivalent", note = "d_phi = " + std::to_string(d_phi) + " > d: orthonormal projection keeps k.q";
                    p = models.grid(n, d, sigma);
                } else {
                    note = "d_phi = " + std::to_string(d_phi) + " < d: Johnson-Lindenstrauss projection";
                }
            } else {
                model = "cache_recall";
                const double beta = spec_real(mp, "beta", 16, at);
                const std::int64_t pairs = budget ? *budget / (2 * std::int64_t{d}) : n;
                if (d < 4) {
                    note = "d < 4";
                } else if (n > pairs) {
                    note = "evicting: holds " + std::to_string(pairs) + " of " + std::to_string(n) + " pairs";
                } else {
                    applies = "exact", p = models.cache(n, d, beta, sigma);
                }
            }

            if (record) continue;
            if (hop > 0 && p) p = theory::chain_cleanup_accuracy(*p, n, hop);
            if (hop > 0) model += " then chain_cleanup_accuracy";
            CsvRecord r(prediction_columns());
            const std::string& tuned = f[col["tuned"]];
            r.set("memory_spec", memory).set("task_spec", task).set("budget_floats", budget_text)
                .set("state_floats", f[col["state_floats"]]).set("d", f[col["d"]]).set("n", f[col["n"]]).set("tuned", tuned)
                .set("slot", hop > 0 ? std::to_string(hop) : std::string())
                .set("frame", tuned.empty() ? "fixed" : "frontier").set("noise_sigma", format_sig(sigma))
                .set("model", model).set("applies", applies).set("note", note);
            const double mean = real_field(f[col["accuracy_mean_frac"]], "accuracy_mean_frac", at);
            const double se = real_field(f[col["accuracy_se_frac"]], "accuracy_se_frac", at);  // aggregate's one rule
            r.set("measured_mean_frac", frac(mean)).set("measured_se_frac", frac(se));
            if (p) {
                r.set("model_accuracy_frac", frac(*p)).set("residual_points", format_sig(100 * (*p - mean)))
                    .set("residual_se", format_sig((*p - mean) / se));
            }
            predictions += r.line();
        }
    };
    rows(true);
    models.evaluate(o.threads);
    rows(false);

    // Capacity lines.
    std::vector<std::int64_t> all_budgets(budgets.begin(), budgets.end());
    std::vector<std::int64_t> extended = all_budgets;
    for (std::int64_t b = 2; b <= o.max_budget; b *= 2)
        if (!budgets.empty() && b > *budgets.rbegin()) extended.push_back(b);
    std::string capacity = header_line(capacity_columns());
    auto emit = [&](const std::string& memory, const std::string& model, const Noise& noise, std::int64_t b,
                    const CapacityLine& c, const std::string& widths, const std::string& note) {
        CsvRecord r(capacity_columns());
        r.set("memory", memory).set("model", model).set("noise", noise.label()).set("budget_floats", std::to_string(b))
            .set("widths", widths).set("note", note);
        if (c.n) {
            r.set("capacity_n", std::to_string(*c.n)).set("d", std::to_string(c.d)).set("model_accuracy_frac", frac(c.accuracy));
            if (c.beta > 0) r.set("beta", format_sig(c.beta));
        }
        capacity += r.line();
    };
    // Each line (model, noise, budget) is a search of its own: they run in parallel and
    // are written in this order.
    struct Line {
        int model;  // 0 HRR, 1 grid, 2 cache
        const Noise* noise;
        std::int64_t b;
        CapacityLine best;
        std::string widths;
    };
    std::vector<Line> lines_out;
    for (const Noise& noise : noises) {
        for (const std::int64_t b : extended) lines_out.push_back({0, &noise, b, {}, ""});
        for (const std::int64_t b : extended) lines_out.push_back({1, &noise, b, {}, ""});
        for (const std::int64_t b : all_budgets) lines_out.push_back({2, &noise, b, {}, ""});
    }
    const auto hrr_line = [&](Line& l) {  // HRR at its natural size D = d = B
        const std::int64_t b = l.b;
        CapacityLine& c = l.best;
        c.d = static_cast<int>(b);
        const double sigma = l.noise->sigma_at(c.d);
        if (const auto s = scan_up(b, o.threshold, [&](std::int64_t n) { return hrr_noisy(n, b, sigma); }))
            c.n = s->first, c.accuracy = s->second;
        l.widths = std::to_string(b);
    };
    const auto grid_line = [&](Line& l) {  // the square grid, widths from the largest d with d² ≤ B down while capacity grows
        const std::int64_t b = l.b;
        int top = 4;
        while (std::int64_t{top} * 2 * top * 2 <= b) top *= 2;
        CapacityLine& best = l.best;
        std::string& widths = l.widths;
        for (int d = top; d >= 4 && std::int64_t{d} * d <= b; d /= 2) {
            widths += (widths.empty() ? "" : " ") + std::to_string(d);
            const double sigma = l.noise->sigma_at(d);
            auto grid = [&](std::int64_t n) { return models.grid(n, d, sigma); };
            if (best.n) {  // a narrower width counts only if it holds more: one call says
                const double a = *best.n * 2 <= std::int64_t{d} * d ? grid(*best.n * 2) : 0;
                if (a < o.threshold) break;
            }
            const auto s = bisect_down(std::int64_t{d} * d, o.threshold, grid);  // n ≤ d²: the grid's own floats
            if (!s) break;
            best.n = s->first, best.d = d, best.accuracy = s->second;
        }
    };
    const auto cache_line = [&](Line& l) {  // the summary's budgets only: widths 4..64, betas 4..128, n <= B / 2d
        const std::int64_t b = l.b;
        CapacityLine& best = l.best;
        std::string& widths = l.widths;
        std::size_t lead = kBetas.size() / 2;  // the beta that passed last, tried first
        for (int d = kCacheWidthMin; d <= kCacheWidthMax; d *= 2) {
            const std::int64_t pairs = b / (2 * std::int64_t{d});
            if (pairs < kSmallestN) break;
            if (best.n && pairs <= *best.n) break;  // wider codes hold fewer pairs
            widths += (widths.empty() ? "" : " ") + std::to_string(d);
            const double sigma = l.noise->sigma_at(d);
            // Does some beta reach the threshold at n? Climbs from `lead` (the beta that passed
            // last) towards higher accuracy, taking it as unimodal in beta; the first that passes.
            auto passes = [&](std::int64_t n) -> std::optional<std::pair<double, double>> {
                auto at = [&](std::size_t i) { return models.cache(n, d, kBetas[i], sigma); };
                std::size_t i = lead;
                double a = at(i);
                while (a < o.threshold) {
                    const double up = i + 1 < kBetas.size() ? at(i + 1) : -1;
                    const double down = i > 0 ? at(i - 1) : -1;
                    if (up <= a && down <= a) return std::nullopt;  // a peak below the threshold
                    if (up > down) ++i, a = up;
                    else --i, a = down;
                }
                lead = i;
                return std::make_pair(kBetas[i], a);
            };
            // Bisection over log2 n in (best, pairs]: the model's accuracy falls with n.
            int lo = best.n ? static_cast<int>(std::log2(static_cast<double>(*best.n))) : 1;  // known or assumed to fail above
            int hi = static_cast<int>(std::log2(static_cast<double>(pairs)));
            std::optional<std::pair<double, double>> found;
            int found_e = 0;
            if (const auto top_pass = passes(std::int64_t{1} << hi)) {
                found = top_pass, found_e = hi;
            } else {
                int fail = hi;  // smallest exponent known to fail
                int ok = lo;    // largest exponent known (or taken) not to matter
                while (fail - ok > 1) {
                    const int mid = (ok + fail) / 2;
                    if (const auto m = passes(std::int64_t{1} << mid)) found = m, found_e = mid, ok = mid;
                    else fail = mid;
                }
            }
            if (found) best.n = std::int64_t{1} << found_e, best.d = d, best.beta = found->first, best.accuracy = found->second;
        }
    };
    parallel_for(static_cast<std::int64_t>(lines_out.size()), o.threads, [&](std::size_t i) {
        Line& l = lines_out[i];
        if (l.model == 0) hrr_line(l);
        else if (l.model == 1) grid_line(l);
        else cache_line(l);
    });
    for (const Line& l : lines_out) {
        const double sigma = l.noise->sigma_at(static_cast<int>(l.b));
        if (l.model == 0)
            emit("hrr", "hrr_recall", *l.noise, l.b, l.best, l.widths,
                 sigma > 0 ? "natural size D = d = B; query noise approximate (see predictions)" : "natural size D = d = B");
        else if (l.model == 1)
            emit("linear", "grid_recall", *l.noise, l.b, l.best, l.widths, "square d x d grid (phi identity)");
        else
            emit("softmax", "cache_recall", *l.noise, l.b, l.best, l.widths,
                 "no eviction (n <= B/2d); beta from 4 8 16 32 64 128: one that passes (climbing from the last)");
    }
    return {predictions, capacity, lines_out.size()};
}

}  // namespace memcap
