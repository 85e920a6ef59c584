// memcap/harness/exec/crossing.cpp — see crossing.hpp.
#include "harness/exec/crossing.hpp"

#include "harness/results/csv.hpp"
#include "harness/results/stats.hpp"
#include "tasks/registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

namespace memcap {

std::vector<std::int64_t> crossing_probe_sizes(std::int64_t lo, std::int64_t hi, int probes) {
    std::vector<std::int64_t> out;
    if (lo < 1 || hi <= lo + 1 || probes < 1) return out;
    const double ratio = static_cast<double>(hi) / static_cast<double>(lo);
    for (int k = 1; k <= probes; ++k) {
        const auto n = static_cast<std::int64_t>(
            std::llround(static_cast<double>(lo) * std::pow(ratio, static_cast<double>(k) / (probes + 1))));
        if (n > lo && n < hi && (out.empty() || n > out.back())) out.push_back(n);
    }
    return out;
}

std::optional<std::size_t> crossing_bracket(const std::vector<double>& means, double threshold) {
    for (std::size_t j = 0; j < means.size(); ++j)
        if (!(means[j] >= threshold)) return j == 0 ? std::nullopt : std::optional<std::size_t>(j);
    return std::nullopt;
}

CellScore cell_score(const std::string& rows) {
    static const CsvColumns columns(cell_header().substr(0, cell_header().size() - 1), cell_columns(), "results");
    static const std::size_t acc = columns["accuracy_frac"], queries = columns["queries"], status = columns["status"];
    CellScore s;
    double sum = 0;
    int lines = 0;
    bool ok = true;
    std::size_t pos = 0;
    while (pos < rows.size()) {
        std::size_t end = rows.find('\n', pos);
        if (end == std::string::npos) end = rows.size();
        const auto fields = split_csv_line(rows.substr(pos, end - pos));
        pos = end + 1;
        if (fields.size() <= std::max({acc, queries, status})) {
            ok = false;
            continue;
        }
        ok = ok && fields[status] == "ok";
        char* e = nullptr;
        const double a = std::strtod(fields[acc].c_str(), &e);
        if (fields[acc].empty() || !std::isfinite(a)) ok = false;
        sum += a;
        s.queries += std::strtod(fields[queries].c_str(), nullptr);
        ++lines;
    }
    s.ok = ok && lines > 0;
    s.accuracy = lines > 0 ? sum / lines : 0;
    return s;
}

CrossingPlan::CrossingPlan(const std::vector<GridBlock>& blocks, const std::vector<CellSpec>& grid) : grid_(grid) {
    std::size_t offset = 0;
    for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
        const GridBlock& b = blocks[bi];
        const std::size_t count = static_cast<std::size_t>(b.size("[block " + b.name + "]"));
        if (!b.crossing.empty()) {
            std::map<CellSpec, std::size_t, SameGroupOrder> seen;  // the group (n = 0, seed 0) -> its entry
            for (std::size_t i = offset; i < offset + count; ++i) {
                CellSpec key = grid_[i];
                key.n = 0, key.seed = 0;
                if (find_task(key.task.name()).capacity_axis != "n") continue;
                if (seen.count(key)) continue;
                seen[key] = groups_.size();
                Group g;
                g.block = bi, g.base = i;
                g.ns = b.ns;
                std::sort(g.ns.begin(), g.ns.end());
                g.thresholds = b.crossing, g.probes = b.crossing_probes, g.seeds = b.seeds;
                g.cap = b.crossing_seeds > 0 ? b.crossing_seeds : std::min<std::int64_t>(4 * b.seeds, 1000000);
                groups_.push_back(std::move(g));
            }
        }
        offset += count;
    }
}

CellSpec CrossingPlan::key_at(const Group& g, std::int64_t n) const {
    CellSpec c = grid_[g.base];
    c.n = n, c.seed = 0;
    return c;
}

void CrossingPlan::score(std::size_t round, std::size_t index, const CellScore& s) {
    const CellSpec& key = round == 0 ? grid_[index] : round_keys_[round - 1][index];
    Point& p = points_[key];
    if (p.scores.empty()) p.source_round = static_cast<int>(round), p.source_index = index;
    p.scores[key.seed] = s;
}

namespace {

struct Stats {
    double mean = std::numeric_limits<double>::quiet_NaN(), se = 0;
    int ok = 0;
};

/// Mean and standard error (stats.hpp's rule) over the ok scores with seed below `below`.
template <class Scores>
Stats point_stats(const Scores& scores, std::uint64_t below) {
    std::vector<double> x;
    double queries = 0;
    for (const auto& [seed, s] : scores)
        if (seed < below && s.ok) x.push_back(s.accuracy), queries += s.queries;
    Stats st;
    st.ok = static_cast<int>(x.size());
    if (x.empty()) return st;
    double sum = 0;
    for (const double v : x) sum += v;
    st.mean = sum / static_cast<double>(x.size());
    double ss = 0;
    for (const double v : x) ss += (v - st.mean) * (v - st.mean);
    const double sd = x.size() > 1 ? std::sqrt(ss / static_cast<double>(x.size() - 1)) : 0.0;
    st.se = accuracy_standard_error(st.mean, sd, static_cast<double>(x.size()), queries / static_cast<double>(x.size()));
    return st;
}

}  // namespace

std::vector<CrossingCell> CrossingPlan::next_round(const std::function<bool(const CellSpec&)>& can_run) {
    std::vector<CrossingCell> out;
    std::vector<CellSpec> keys;
    // (point, seed): one cell, whichever block asks
    const auto before = [](const CellSpec& a, const CellSpec& b) { return SameGroupOrder()(a, b) || (!SameGroupOrder()(b, a) && a.seed < b.seed); };
    std::set<CellSpec, decltype(before)> planned(before);
    brackets_ = probe_points_ = 0;
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
        const Group& g = groups_[gi];
        // the grid's means, on the grid's seeds only
        std::vector<double> means;
        for (const auto n : g.ns) {
            const auto it = points_.find(key_at(g, n));
            means.push_back(it == points_.end() ? std::numeric_limits<double>::quiet_NaN()
                                                : point_stats(it->second.scores, static_cast<std::uint64_t>(g.seeds)).mean);
        }
        std::map<std::int64_t, std::vector<double>> near;  // n -> the thresholds whose bracket holds it
        std::set<std::int64_t> probes;
        for (const double t : g.thresholds) {
            const auto j = crossing_bracket(means, t);
            if (!j) continue;
            ++brackets_;
            const std::int64_t lo = g.ns[*j - 1], hi = g.ns[*j];
            near[lo].push_back(t), near[hi].push_back(t);
            for (const auto n : crossing_probe_sizes(lo, hi, g.probes)) near[n].push_back(t), probes.insert(n);
        }
        probe_points_ += probes.size();
        for (const auto& [n, ts] : near) {
            const CellSpec key = key_at(g, n);
            const auto it = points_.find(key);
            std::uint64_t from = 0, to = 0;
            CrossingCell c;
            c.n = n, c.block = g.block, c.group = gi;
            if (it == points_.end() || it->second.scores.empty()) {
                if (!probes.count(n)) continue;  // a grid n without results: nothing to refine from
                if (can_run && !can_run(key)) continue;
                from = 0, to = static_cast<std::uint64_t>(g.seeds);
                c.source_round = -1, c.index = g.base;
            } else {
                const Point& p = it->second;
                const std::uint64_t m = p.scores.rbegin()->first + 1;  // seeds 0..m-1 have run
                const std::uint64_t cap = static_cast<std::uint64_t>(g.cap);
                if (m >= cap) continue;
                const Stats st = point_stats(p.scores, m);
                if (st.ok == 0) continue;
                bool uncertain = false;
                for (const double t : ts) uncertain = uncertain || std::fabs(st.mean - t) <= kCrossingSeparation * st.se;
                if (!uncertain) continue;
                from = m, to = std::min(2 * m, cap);
                c.source_round = p.source_round, c.index = p.source_index;
            }
            for (std::uint64_t s = from; s < to; ++s) {
                CellSpec k = key;
                k.seed = s;
                if (!planned.insert(k).second) continue;
                c.seed = s;
                out.push_back(c);
                keys.push_back(std::move(k));
            }
        }
    }
    if (!out.empty()) round_keys_.push_back(std::move(keys));
    return out;
}

}  // namespace memcap
