// memcap/harness/results/theory_table.cpp — see theory_table.hpp.
#include "harness/results/theory_table.hpp"

#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/results/csv.hpp"
#include "memories/registry.hpp"
#include "memories/theory/capacity.hpp"
#include "memories/theory/chains.hpp"
#include "memories/theory/forgetting.hpp"
#include "memories/theory/recall_model.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
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
        {"capacity_nstar", "n*: the real n >= 1 where the model's accuracy at its best setting crosses the threshold (memories/theory/capacity.hpp); empty: not even n = 1"},
        {"nstar_kind", "crossing (the model's accuracy crosses the threshold at n*) or limit (n* is the setting's largest n: B/2d pairs for the cache, the accuracy still above the threshold there)"},
        {"d", "the width whose crossing is n*"},
        {"beta", "the cache's beta whose crossing is n* (empty for other models)"},
        {"model_accuracy_frac", "the model's accuracy at n* (the threshold to the root finder's tolerance, at a crossing)"},
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

/// The table entry called `name` when it declares a recall model; null otherwise (another
/// backend, or one this build does not know).
const MemoryEntry* modelled_memory(const std::string& name) {
    for (const auto& e : memory_registry())
        if (e.name == name) return e.recall_model ? &e : nullptr;
    return nullptr;
}

/// True when the table entry called `name` declares a horizon model (recent_recall).
bool modelled_horizon(const std::string& name) {
    for (const auto& e : memory_registry())
        if (e.name == name) return static_cast<bool>(e.horizon_model);
    return false;
}

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

std::string frac(double x) { return format_sig(x); }

/// One summary CSV read whole: its columns, its rows and the predictions written for it.
struct SummaryRows {
    std::string where;
    CsvColumns col;
    std::vector<std::string> lines;
    std::string predictions;
};

SummaryRows read_summary(const std::string& path) {
    const std::string where = "input '" + path + "'";
    std::ifstream in(path);
    if (!in) throw UsageError(where + ": cannot open for reading");
    std::string line;
    if (!std::getline(in, line)) throw UsageError(where + ": empty, not a memcap summary CSV");
    if (line.find(",seed,") != std::string::npos && line.find(",seeds,") == std::string::npos)
        throw UsageError(where + ": per-seed rows (`run` or `sweep` output); give its summary, `memcap aggregate " +
                         path + " --out SUMMARY.csv`");
    SummaryRows s{where, CsvColumns(line, summary_columns(), where), {}, {}};
    while (std::getline(in, line)) s.lines.push_back(line);
    return s;
}

}  // namespace

TheoryTables theory_tables(const TheoryOptions& o) {
    if (o.summary_paths.empty()) throw UsageError("theory: no summary CSV given");
    std::vector<SummaryRows> summaries;
    for (const std::string& path : o.summary_paths) summaries.push_back(read_summary(path));

    // Two passes over the rows of every summary: the first notes every model call the rows
    // need (a call two summaries share is made once), those run in parallel, and the second
    // writes the rows from the results.
    theory::ModelTable models;
    for (SummaryRows& s : summaries) s.predictions = header_line(prediction_columns());
    std::set<Noise> noises;
    std::set<std::int64_t> budgets;
    // recent_recall rows (a lag bucket each): the model the memory's entry declares for a recent
    // pair in a long stream (MemoryEntry::horizon_model: the budgeted cache's sliding window,
    // the decayed grids'); every other memory has none there.
    const auto recent_row = [&](SummaryRows& s, const std::vector<std::string>& f, const std::string& at, bool record) {
        const CsvColumns& col = s.col;
        const std::string& task = f[col["task_spec"]];
        const std::string& memory = f[col["memory_spec"]];
        if (name_of(f[col["readout"]]) != "native" || f[col["slot"]].empty()) return;
        const auto tp = spec_params(task, at);
        Noise noise;
        noise.sigma = spec_real(tp, "noise", 0, at);
        noise.cosine = spec_real(tp, "cosine", 1, at);
        const int d = static_cast<int>(int_field(f[col["d"]], "d", at));
        const std::int64_t n = int_field(f[col["n"]], "n", at);
        theory::LagBucket bucket;
        bucket.hi = int_field(f[col["slot"]], "slot", at);
        bucket.writes = n * static_cast<std::int64_t>(spec_real(tp, "ratio", 8, at));
        bucket.d = d;
        bucket.cosine = noise.cosine < 1 ? noise.cosine : (noise.sigma > 0 ? 1.0 / std::sqrt(1.0 + noise.sigma * noise.sigma * d) : 1.0);
        const std::int64_t buckets = std::min<std::int64_t>(static_cast<std::int64_t>(spec_real(tp, "buckets", 8, at)), n);
        bucket.lo = -1;  // the bucket whose largest lag is hi: (⌊b n/B⌋, ⌊(b+1) n/B⌋]
        for (std::int64_t b = 0; b < buckets; ++b)
            if ((b + 1) * n / buckets == bucket.hi) bucket.lo = b * n / buckets;
        if (bucket.lo < 0)
            throw UsageError(at + ": slot " + std::to_string(bucket.hi) + " is no lag bucket's largest lag of recent_recall at n=" +
                             std::to_string(n) + " with " + std::to_string(buckets) + " buckets");
        if (!modelled_horizon(name_of(memory))) return;
        const std::string& budget_text = f[col["budget_floats"]];
        const std::optional<std::int64_t> budget =
            budget_text.empty() ? std::nullopt : std::optional<std::int64_t>(int_field(budget_text, "budget_floats", at));
        Spec spec;
        try {
            spec = parse_memory_spec(memory);
        } catch (const UsageError& e) {
            throw UsageError(at + ": " + e.what());
        }
        const std::optional<theory::RecallModel> described = horizon_model(spec, MemoryShape(d, d, budget), bucket);
        if (!described || !described->call) return;
        const std::string &model = described->model, &applies = described->applies, &note = described->note;
        const std::optional<theory::ModelCall>& call = described->call;
        const double p = models.value(*call);
        if (record) return;
        CsvRecord r(prediction_columns());
        const std::string& tuned = f[col["tuned"]];
        r.set("memory_spec", memory).set("task_spec", task).set("budget_floats", budget_text)
            .set("state_floats", f[col["state_floats"]]).set("d", f[col["d"]]).set("n", f[col["n"]]).set("tuned", tuned)
            .set("slot", f[col["slot"]]).set("frame", tuned.empty() ? "fixed" : "frontier")
            .set("noise_sigma", format_sig(noise.sigma_at(d))).set("model", model).set("applies", applies).set("note", note);
        const double mean = real_field(f[col["accuracy_mean_frac"]], "accuracy_mean_frac", at);
        const double se = real_field(f[col["accuracy_se_frac"]], "accuracy_se_frac", at);
        r.set("measured_mean_frac", frac(mean)).set("measured_se_frac", frac(se));
        r.set("model_accuracy_frac", frac(p)).set("residual_points", format_sig(100 * (p - mean))).set("residual_se", format_sig((p - mean) / se));
        s.predictions += r.line();
    };
    const auto rows = [&](SummaryRows& s, bool record) {
        const CsvColumns& col = s.col;
        std::size_t lineno = 1;
        for (const std::string& text : s.lines) {
            ++lineno;
            if (text.empty()) continue;
            const auto f = split_csv_line(text);
            const std::string at = s.where + " line " + std::to_string(lineno);
            if (f.size() != col.count())
                throw UsageError(at + ": " + std::to_string(f.size()) + " fields, expected " + std::to_string(col.count()));
            const std::string& task = f[col["task_spec"]];
            if (name_of(task) == "recent_recall") {
                recent_row(s, f, at, record);
                continue;
            }
            if (name_of(task) != "assoc_recall" && name_of(task) != "chain_recall") continue;
            const auto tp = spec_params(task, at);
            // a context written more than once: the models are of one pass (docs/theory.md §7
            // gives the delta rule's passes as a Kaczmarz iteration, without a recall model)
            if (tp.count("passes") && tp.at("passes") != "1") continue;
            if (tp.count("control") && tp.at("control") != "none") continue;
            if (tp.count("absent")) continue;  // the models score present queries of a task without absent ones
            // chain_recall with cleanup: the one-hop model compounded over the row's hop
            // (theory::chain_cleanup_accuracy); without cleanup the hops are not independent
            // (the composition of measured one-hop curves is in scripts/studies/chains/section.py).
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
            const MemoryEntry* entry = modelled_memory(name_of(memory));
            if (!entry) continue;
            if (name_of(f[col["readout"]]) != "native") continue;  // the models describe each memory's own read
            Spec spec;
            try {
                spec = parse_memory_spec(memory);
            } catch (const UsageError& e) {
                throw UsageError(at + ": " + e.what());
            }
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

            // keys over a vocabulary (docs/theory.md, section 4): random rows are fresh random
            // keys to every model; the backend's model says what it makes of a frame or learned keys
            theory::RecallTask setting;
            setting.spec = task, setting.d = d, setting.n = n, setting.noise_sigma = sigma;
            setting.keys = tp.count("keys") ? tp.at("keys") : "random";
            setting.vocab = tp.count("vocab") ? parse_int(tp.at("vocab"), at + ": vocab") : 0;
            const std::optional<theory::RecallModel> described = recall_model(spec, MemoryShape(d, d, budget), setting);
            if (!described) continue;
            std::string model = described->model;
            const std::string& applies = described->applies;
            const std::string& note = described->note;
            std::optional<double> p;
            if (described->call) p = models.value(*described->call);

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
            s.predictions += r.line();
        }
    };
    models.record(true);
    for (SummaryRows& s : summaries) rows(s, true);
    models.evaluate(o.threads);
    models.record(false);
    for (SummaryRows& s : summaries) rows(s, false);
    std::vector<std::string> predictions;
    for (SummaryRows& s : summaries) predictions.push_back(std::move(s.predictions));

    // Capacity lines.
    std::vector<std::int64_t> all_budgets(budgets.begin(), budgets.end());
    std::vector<std::int64_t> extended = all_budgets;
    for (std::int64_t b = 2; b <= o.max_budget; b *= 2)
        if (!budgets.empty() && b > *budgets.rbegin()) extended.push_back(b);
    std::string capacity = header_line(capacity_columns());
    // Each line (model, noise, budget) is a search of its own: they run in parallel and
    // are written in this order.
    struct Line {
        const theory::CapacityModel* model;
        const Noise* noise;
        std::int64_t b;
        theory::CapacityLine best;
    };
    std::vector<Line> lines_out;
    if (!o.lines) return {predictions, std::string(), 0};
    for (const Noise& noise : noises)
        for (const theory::CapacityModel& m : theory::capacity_models())
            for (const std::int64_t b : m.extended ? extended : all_budgets) lines_out.push_back({&m, &noise, b, {}});
    theory::parallel_for(static_cast<std::int64_t>(lines_out.size()), o.threads, [&](std::size_t i) {
        Line& l = lines_out[i];
        l.best = l.model->search(l.b, o.threshold, [&](int d) { return l.noise->sigma_at(d); }, models);
    });
    for (const Line& l : lines_out) {
        const theory::CapacityLine& c = l.best;
        CsvRecord r(capacity_columns());
        r.set("memory", l.model->memory).set("model", l.model->model).set("noise", l.noise->label())
            .set("budget_floats", std::to_string(l.b)).set("widths", c.widths)
            .set("note", l.model->note(l.noise->sigma_at(static_cast<int>(l.b))));
        if (c.nstar > 0) {
            r.set("capacity_nstar", format_sig(c.nstar)).set("nstar_kind", c.nstar_at_limit ? "limit" : "crossing")
                .set("d", std::to_string(c.nstar_d)).set("model_accuracy_frac", frac(c.nstar_accuracy));
            if (c.nstar_beta > 0) r.set("beta", format_sig(c.nstar_beta));
        }
        capacity += r.line();
    }
    return {predictions, capacity, lines_out.size()};
}

}  // namespace memcap
