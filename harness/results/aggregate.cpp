// memcap/harness/results/aggregate.cpp — see aggregate.hpp.
#include "harness/results/aggregate.hpp"

#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/results/csv.hpp"
#include "harness/results/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace memcap {
namespace {

struct Acc {
    GroupSummary g;
    std::vector<double> acc;
    double dist_sum = 0, cos_sum = 0;
    std::int64_t dist_count = 0, cos_count = 0;  // seeds with a distance, a cosine (the probe on slot tasks has none)
    std::vector<double> threshold, false_accept, present_accept, balanced, auc;  // seeds that have them
    /// Per seed of the group: the line that gave it and a hash of its fields (a second row of a
    /// seed is merged when it repeats the first exactly, refused when it differs).
    struct Seen {
        std::size_t line;
        std::uint64_t hash;
    };
    std::unordered_map<std::string, Seen> seen;
};

/// FNV-1a over the fields, each ended by a unit separator: equal rows hash equal, and two rows
/// that differ collide with probability 2^-64.
std::uint64_t row_hash(const std::vector<std::string>& fields) {
    std::uint64_t h = 14695981039346656037ull;
    for (const auto& f : fields) {
        for (const unsigned char c : f) h = (h ^ c) * 1099511628211ull;
        h = (h ^ 0x1fu) * 1099511628211ull;
    }
    return h;
}

/// "softmax:beta=16 | assoc_recall | native | budget 1024 | d 64 | n 16" (and slot, tuned when set).
std::string describe_cell(const GroupSummary& g) {
    std::string out = g.memory_spec + " | " + g.task_spec + " | " + g.readout + " | budget " +
                      (g.budget_floats.empty() ? "natural" : g.budget_floats) + " | d " + g.d + " | n " + g.n;
    if (!g.slot.empty()) out += " | slot " + g.slot;
    if (!g.tuned.empty()) out += " | tuned " + g.tuned;
    return out;
}

GroupSummary::Optional summarise_optional(const std::vector<double>& x) {
    GroupSummary::Optional o;
    if (x.empty()) return o;
    const Summary s = summarise(x, SummaryOptions{0.0, true});
    o.count = s.count, o.mean = s.mean, o.lo = s.lo, o.hi = s.hi;
    return o;
}

}  // namespace

std::vector<GroupSummary> summarise_csv(const std::string& path, std::string* note) {
    std::ifstream in(path);
    if (!in) throw UsageError("input '" + path + "': cannot open for reading");
    std::string line;
    if (!std::getline(in, line)) throw UsageError("input '" + path + "': empty, not a memcap results CSV");
    const CsvColumns col(line, cell_columns(), "input '" + path + "'");
    const std::size_t memory = col["memory_spec"], task = col["task_spec"], readout = col["readout"],
                      budget = col["budget_floats"], state = col["state_floats"], d = col["d"], n = col["n"],
                      slot = col["slot"], queries = col["queries"], accuracy = col["accuracy_frac"],
                      chance = col["chance_frac"], dist = col["target_dist_mean"], status = col["status"],
                      tuned = col["tuned"];
    // Columns added later: a results CSV written before them has none (they stay empty).
    const auto optional_column = [&](const char* name) -> std::ptrdiff_t {
        try {
            return static_cast<std::ptrdiff_t>(col[name]);
        } catch (const std::logic_error&) {
            return -1;
        }
    };
    const std::ptrdiff_t cosine = optional_column("target_cos_mean"), threshold = optional_column("threshold"),
                         false_accept = optional_column("false_accept_frac"),
                         present_accept = optional_column("present_accept_frac"),
                         balanced = optional_column("balanced_accuracy_frac"), auc = optional_column("auc_frac"),
                         params = optional_column("param_floats"), bits = optional_column("state_bits");
    const std::string header = line;
    const std::size_t seed = col["seed"];
    std::map<std::string, std::size_t> index;
    std::vector<Acc> groups;
    std::size_t lineno = 1, repeated = 0;
    std::string first_repeat;  // the first row merged, for the note
    while (std::getline(in, line)) {
        ++lineno;
        if (line.empty()) continue;
        if (line == header) continue;  // the header again: files joined with `cat a.csv b.csv`
        const auto f = split_csv_line(line);
        if (f.size() != col.count())
            throw UsageError("input '" + path + "': line " + std::to_string(lineno) + " has " +
                             std::to_string(f.size()) + " fields, expected " + std::to_string(col.count()));
        const std::string key = f[memory] + '\x1f' + f[task] + '\x1f' + f[readout] + '\x1f' + f[budget] + '\x1f' +
                                f[d] + '\x1f' + f[n] + '\x1f' + f[slot] + '\x1f' + f[tuned];
        auto it = index.find(key);
        if (it == index.end()) {
            it = index.emplace(key, groups.size()).first;
            Acc a;
            a.g.memory_spec = f[memory], a.g.task_spec = f[task], a.g.readout = f[readout], a.g.budget_floats = f[budget];
            a.g.d = f[d], a.g.n = f[n], a.g.slot = f[slot], a.g.tuned = f[tuned];
            groups.push_back(a);
        }
        Acc& a = groups[it->second];
        // One row per (cell, seed): a second row of a seed would count it twice (files joined
        // that overlap). memcap's rows are a function of cell and seed, so an exact repeat is
        // the same measurement again and is counted once; a row that differs is refused.
        const std::uint64_t hash = row_hash(f);
        const auto [seen, fresh] = a.seen.emplace(f[seed], Acc::Seen{lineno, hash});
        if (!fresh) {
            if (seen->second.hash != hash)
                throw UsageError("input '" + path + "': lines " + std::to_string(seen->second.line) + " and " +
                                 std::to_string(lineno) + " are both seed " + f[seed] + " of cell " + describe_cell(a.g) +
                                 " but differ (results of different runs or versions?); keep one of them");
            if (repeated++ == 0)
                first_repeat = "line " + std::to_string(lineno) + " repeats line " + std::to_string(seen->second.line) +
                               ", seed " + f[seed] + " of cell " + describe_cell(a.g);
            continue;
        }
        a.g.seeds += 1;
        if (f[status] != "ok") {
            a.g.errors += 1;
            continue;
        }
        const std::string what = "input '" + path + "' line " + std::to_string(lineno);
        a.g.state_floats = std::max(a.g.state_floats, parse_int(f[state], what + " state_floats"));
        if (bits >= 0 && !f[std::size_t(bits)].empty())
            a.g.state_bits = std::max(a.g.state_bits.value_or(0), parse_int(f[std::size_t(bits)], what + " state_bits"));
        if (params >= 0 && !f[std::size_t(params)].empty())
            a.g.param_floats = std::max(a.g.param_floats.value_or(0), parse_int(f[std::size_t(params)], what + " param_floats"));
        a.g.queries += parse_int(f[queries], what + " queries");
        a.acc.push_back(parse_real(f[accuracy], what + " accuracy_frac"));
        a.g.chance = parse_real(f[chance], what + " chance_frac");
        if (!f[dist].empty()) a.dist_sum += parse_real(f[dist], what + " target_dist_mean"), ++a.dist_count;
        if (cosine >= 0 && !f[std::size_t(cosine)].empty())
            a.cos_sum += parse_real(f[std::size_t(cosine)], what + " target_cos_mean"), ++a.cos_count;
        const auto take = [&](std::ptrdiff_t column, const char* name, std::vector<double>& into) {
            if (column >= 0 && !f[std::size_t(column)].empty()) into.push_back(parse_real(f[std::size_t(column)], what + " " + name));
        };
        take(threshold, "threshold", a.threshold);
        take(false_accept, "false_accept_frac", a.false_accept);
        take(present_accept, "present_accept_frac", a.present_accept);
        take(balanced, "balanced_accuracy_frac", a.balanced);
        take(auc, "auc_frac", a.auc);
    }
    if (note && repeated)
        *note = "input '" + path + "': " + std::to_string(repeated) + (repeated == 1 ? " row repeats" : " rows repeat") +
                " an earlier row exactly, counted once (" + first_repeat + ")";
    std::vector<GroupSummary> out;
    for (auto& a : groups) {
        if (!a.acc.empty()) {
            const Summary s = summarise(a.acc, SummaryOptions{0.0, true});
            a.g.mean = s.mean, a.g.sd = s.sd, a.g.ci_lo = s.lo, a.g.ci_hi = s.hi;
            const double ran = static_cast<double>(a.acc.size());
            a.g.se = accuracy_standard_error(s.mean, s.sd, ran, static_cast<double>(a.g.queries) / ran);
            a.g.dist_mean = a.dist_count ? a.dist_sum / static_cast<double>(a.dist_count)
                                         : std::numeric_limits<double>::quiet_NaN();
            a.g.cos_mean = a.cos_count ? a.cos_sum / static_cast<double>(a.cos_count)
                                       : std::numeric_limits<double>::quiet_NaN();
        }
        a.g.threshold = summarise_optional(a.threshold);
        a.g.false_accept = summarise_optional(a.false_accept);
        a.g.present_accept = summarise_optional(a.present_accept);
        a.g.balanced = summarise_optional(a.balanced);
        a.g.auc = summarise_optional(a.auc);
        out.push_back(a.g);
    }
    return out;
}

std::string summary_csv(const std::vector<GroupSummary>& groups) {
    std::string out = header_line(summary_columns());
    for (const auto& g : groups) {
        const bool any = g.seeds > g.errors;
        const bool ci = g.seeds - g.errors > 1;
        const auto measured = [&](bool shown, double x) { return shown ? format_sig(x) : std::string(); };
        CsvRecord r(summary_columns());
        r.set("memory", memory_name(g.memory_spec)).set("memory_spec", g.memory_spec).set("task_spec", g.task_spec);
        r.set("readout", g.readout);
        r.set("budget_floats", g.budget_floats).set("state_floats", any ? std::to_string(g.state_floats) : "");
        r.set("state_bits", any && g.state_bits ? std::to_string(*g.state_bits) : "");
        r.set("param_floats", any && g.param_floats ? std::to_string(*g.param_floats) : "");
        r.set("d", g.d).set("n", g.n).set("slot", g.slot);
        r.set("seeds", std::to_string(g.seeds)).set("errors", std::to_string(g.errors)).set("queries", std::to_string(g.queries));
        r.set("accuracy_mean_frac", measured(any, g.mean)).set("accuracy_sd_frac", measured(any, g.sd));
        r.set("accuracy_se_frac", measured(any, g.se));
        r.set("accuracy_ci95_lo_frac", measured(ci, g.ci_lo)).set("accuracy_ci95_hi_frac", measured(ci, g.ci_hi));
        r.set("tuned", g.tuned);
        r.set("chance_frac", measured(any, g.chance)).set("target_dist_mean", measured(any && !std::isnan(g.dist_mean), g.dist_mean));
        r.set("target_cos_mean", measured(any && !std::isnan(g.cos_mean), g.cos_mean));
        const auto optional = [&](const char* mean, const char* lo, const char* hi, const GroupSummary::Optional& o) {
            r.set(mean, measured(o.count > 0, o.mean));
            if (lo) r.set(lo, measured(o.count > 1, o.lo)).set(hi, measured(o.count > 1, o.hi));
        };
        optional("threshold_mean", nullptr, nullptr, g.threshold);
        optional("false_accept_mean_frac", "false_accept_ci95_lo_frac", "false_accept_ci95_hi_frac", g.false_accept);
        optional("present_accept_mean_frac", nullptr, nullptr, g.present_accept);
        optional("balanced_accuracy_mean_frac", "balanced_accuracy_ci95_lo_frac", "balanced_accuracy_ci95_hi_frac", g.balanced);
        optional("auc_mean_frac", "auc_ci95_lo_frac", "auc_ci95_hi_frac", g.auc);
        out += r.line();
    }
    return out;
}

std::string summary_markdown(const std::vector<GroupSummary>& groups) {
    // task -> row label -> n -> cell, keeping first-appearance order. Tasks with
    // slots (lags, positions) show the mean over slots of the per-slot means.
    std::vector<std::string> tasks;
    std::map<std::string, std::vector<std::string>> rows, cols;
    struct Cell {
        double sum = 0;
        int slots = 0, failed = 0;
    };
    std::map<std::string, Cell> cells;
    std::map<std::string, bool> has_slots;
    auto push_unique = [](std::vector<std::string>& v, const std::string& s) {
        if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
    };
    for (const auto& g : groups) {
        push_unique(tasks, g.task_spec);
        has_slots[g.task_spec] = has_slots[g.task_spec] || !g.slot.empty();
        // a width chosen on tuning seeds reads "64 (chosen)", apart from the same cell at a fixed d = 64
        const std::string row = "`" + g.memory_spec + "` | " + g.readout + " | " + g.d +
                                (g.tuned.empty() ? "" : " (chosen)") + " | " +
                                (g.budget_floats.empty() ? "natural" : g.budget_floats);
        push_unique(rows[g.task_spec], row);
        push_unique(cols[g.task_spec], g.n);
        Cell& c = cells[g.task_spec + '\x1f' + row + '\x1f' + g.n];
        if (g.seeds > g.errors) c.sum += g.mean, ++c.slots;
        else ++c.failed;
    }
    std::map<std::string, std::string> cell;
    for (const auto& [key, c] : cells) {
        char buf[32];
        if (c.failed == 0 && c.slots > 0) std::snprintf(buf, sizeof buf, "%.1f", 100.0 * c.sum / c.slots);
        else std::snprintf(buf, sizeof buf, "error");
        cell[key] = buf;
    }
    std::string out;
    for (const auto& t : tasks) {
        out += "Mean accuracy (%) over seeds" + std::string(has_slots[t] ? ", averaged over slots" : "") + ", `" + t +
               "`; columns are n.\n\n| memory | readout | d | budget (floats) |";
        for (const auto& n : cols[t]) out += " " + n + " |";
        out += "\n|---|---|---|---|";
        for (std::size_t i = 0; i < cols[t].size(); ++i) out += "---:|";
        out += "\n";
        for (const auto& r : rows[t]) {
            out += "| " + r + " |";
            for (const auto& n : cols[t]) {
                auto it = cell.find(t + '\x1f' + r + '\x1f' + n);
                out += " " + (it == cell.end() ? std::string() : it->second) + " |";
            }
            out += "\n";
        }
        out += "\n";
    }
    return out;
}

}  // namespace memcap
