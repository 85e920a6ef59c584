// memcap/harness/results/aggregate.cpp — see aggregate.hpp.
#include "harness/results/aggregate.hpp"

#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/eval/cell.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

namespace memcap {

const char* const kSummaryHeader =
    "memory_spec,task_spec,readout,budget_floats,state_floats,d,n,slot,seeds,errors,queries,"
    "accuracy_mean_frac,accuracy_sd_frac,accuracy_ci95_lo_frac,accuracy_ci95_hi_frac,chance_frac,target_dist_mean\n";

namespace {

std::string sig(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}

struct Acc {
    GroupSummary g;
    std::vector<double> acc;
    double dist_sum = 0;
    std::int64_t dist_count = 0;  // seeds with a distance (the probe on slot tasks has none)
};

}  // namespace

std::vector<GroupSummary> summarise_csv(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw UsageError("input '" + path + "': cannot open for reading");
    std::string line;
    std::string header(kCsvHeader);
    header.pop_back();
    if (!std::getline(in, line) || line != header)
        throw UsageError("input '" + path + "': not a memcap results CSV (header differs)");
    std::map<std::string, std::size_t> index;
    std::vector<Acc> groups;
    const std::size_t ncols = split_csv_line(header).size();
    std::size_t lineno = 1;
    while (std::getline(in, line)) {
        ++lineno;
        if (line.empty()) continue;
        const auto f = split_csv_line(line);
        if (f.size() != ncols)
            throw UsageError("input '" + path + "': line " + std::to_string(lineno) + " has " +
                             std::to_string(f.size()) + " fields, expected " + std::to_string(ncols));
        // columns: 0 memory 1 task 2 readout 3 budget 4 state 5 param 6 d 7 n 8 seed 9 slot
        //          10 queries 11 correct 12 acc 13 chance 14 dist 15 status 16 message
        const std::string key = f[0] + '\x1f' + f[1] + '\x1f' + f[2] + '\x1f' + f[3] + '\x1f' + f[6] + '\x1f' + f[7] +
                                '\x1f' + f[9];
        auto it = index.find(key);
        if (it == index.end()) {
            it = index.emplace(key, groups.size()).first;
            Acc a;
            a.g.memory_spec = f[0], a.g.task_spec = f[1], a.g.readout = f[2], a.g.budget_floats = f[3];
            a.g.d = f[6], a.g.n = f[7], a.g.slot = f[9];
            groups.push_back(a);
        }
        Acc& a = groups[it->second];
        a.g.seeds += 1;
        if (f[15] != "ok") {
            a.g.errors += 1;
            continue;
        }
        const std::string what = "input '" + path + "' line " + std::to_string(lineno);
        a.g.state_floats = std::max(a.g.state_floats, parse_int(f[4], what + " state_floats"));
        a.g.queries += parse_int(f[10], what + " queries");
        a.acc.push_back(parse_real(f[12], what + " accuracy_frac"));
        a.g.chance = parse_real(f[13], what + " chance_frac");
        if (!f[14].empty()) a.dist_sum += parse_real(f[14], what + " target_dist_mean"), ++a.dist_count;
    }
    std::vector<GroupSummary> out;
    for (auto& a : groups) {
        const auto s = static_cast<double>(a.acc.size());
        if (!a.acc.empty()) {
            double sum = 0;
            for (double x : a.acc) sum += x;
            a.g.mean = sum / s;
            double ss = 0;
            for (double x : a.acc) ss += (x - a.g.mean) * (x - a.g.mean);
            a.g.sd = a.acc.size() > 1 ? std::sqrt(ss / (s - 1)) : 0.0;
            const double t = a.acc.size() > 1
                                 ? boost::math::quantile(boost::math::students_t(s - 1), 0.975)
                                 : std::numeric_limits<double>::quiet_NaN();
            a.g.ci_lo = std::max(0.0, a.g.mean - t * a.g.sd / std::sqrt(s));
            a.g.ci_hi = std::min(1.0, a.g.mean + t * a.g.sd / std::sqrt(s));
            a.g.dist_mean = a.dist_count ? a.dist_sum / static_cast<double>(a.dist_count)
                                         : std::numeric_limits<double>::quiet_NaN();
        }
        out.push_back(a.g);
    }
    return out;
}

std::string summary_csv(const std::vector<GroupSummary>& groups) {
    std::string out = kSummaryHeader;
    for (const auto& g : groups) {
        const bool any = g.seeds > g.errors;
        const bool ci = g.seeds - g.errors > 1;
        out += csv_field(g.memory_spec) + "," + csv_field(g.task_spec) + "," + csv_field(g.readout) + "," + g.budget_floats + "," +
               (any ? std::to_string(g.state_floats) : "") + "," + g.d + "," + g.n + "," + g.slot + "," +
               std::to_string(g.seeds) + "," + std::to_string(g.errors) + "," + std::to_string(g.queries) + "," +
               (any ? sig(g.mean) : "") + "," + (any ? sig(g.sd) : "") + "," + (ci ? sig(g.ci_lo) : "") + "," +
               (ci ? sig(g.ci_hi) : "") + "," + (any ? sig(g.chance) : "") + "," + (any && !std::isnan(g.dist_mean) ? sig(g.dist_mean) : "") +
               "\n";
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
        const std::string row = "`" + g.memory_spec + "` | " + g.readout + " | " + g.d + " | " +
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
