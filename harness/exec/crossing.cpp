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
    for (std::size_t j = means.size(); j-- > 0;)
        if (means[j] >= threshold) return j + 1 < means.size() ? std::optional<std::size_t>(j + 1) : std::nullopt;
    return std::nullopt;
}

double crossing_n(const std::vector<std::int64_t>& ns, const std::vector<double>& means, double threshold) {
    const auto j = crossing_bracket(means, threshold);
    if (!j) {
        for (const double a : means)
            if (a >= threshold) return std::numeric_limits<double>::infinity();  // the largest passes
        return -std::numeric_limits<double>::infinity();
    }
    const double a0 = means[*j - 1], a1 = means[*j];
    const double frac = a0 > a1 ? (a0 - threshold) / (a0 - a1) : 0.0;  // a1 NaN: not greater, 0
    const double l0 = std::log(static_cast<double>(ns[*j - 1])), l1 = std::log(static_cast<double>(ns[*j]));
    return std::exp(l0 + frac * (l1 - l0));
}

bool CrossingEstimate::resolved(double width) const {
    return std::isfinite(value) && std::isfinite(lo) && std::isfinite(hi) && (hi - lo) / 2 <= width * value;
}

CrossingEstimate crossing_estimate(const std::vector<CurvePoint>& curve, double threshold, int resamples) {
    std::vector<std::int64_t> ns;
    std::vector<double> measured;
    std::vector<std::uint64_t> universe;
    // each point as readings (one, or its parts), each reading's seeds
    std::vector<std::vector<const std::vector<std::pair<std::uint64_t, double>>*>> readings;
    for (const auto& p : curve) {
        ns.push_back(p.n);
        readings.emplace_back();
        if (p.parts.empty()) readings.back().push_back(&p.seeds);
        for (const auto& part : p.parts) readings.back().push_back(&part);
        double low = std::numeric_limits<double>::infinity();
        for (const auto* r : readings.back()) {
            double sum = 0;
            for (const auto& [seed, a] : *r) sum += a, universe.push_back(seed);
            low = std::min(low, r->empty() ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(r->size()));
        }
        measured.push_back(low);
    }
    std::sort(universe.begin(), universe.end());
    universe.erase(std::unique(universe.begin(), universe.end()), universe.end());
    CrossingEstimate e;
    e.value = crossing_n(ns, measured, threshold);
    e.lo = e.hi = e.value;
    if (universe.empty() || resamples < 1) return e;
    // each reading's seeds as (index into the universe, accuracy), with the reading's measured mean
    std::vector<std::vector<std::vector<std::pair<std::size_t, double>>>> at(curve.size());
    std::vector<std::vector<double>> own(curve.size());
    for (std::size_t i = 0; i < curve.size(); ++i)
        for (const auto* r : readings[i]) {
            at[i].emplace_back();
            double sum = 0;
            for (const auto& [seed, a] : *r) {
                at[i].back().emplace_back(
                    static_cast<std::size_t>(std::lower_bound(universe.begin(), universe.end(), seed) - universe.begin()), a);
                sum += a;
            }
            own[i].push_back(r->empty() ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(r->size()));
        }
    const std::size_t u = universe.size();
    std::uint64_t state = 0x9E3779B97F4A7C15ull ^ 20250917ull;  // splitmix64, the same start for every curve
    const auto next = [&state]() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    std::vector<double> count(u), means(curve.size()), out(static_cast<std::size_t>(resamples));
    for (int r = 0; r < resamples; ++r) {
        std::fill(count.begin(), count.end(), 0.0);
        for (std::size_t k = 0; k < u; ++k)
            count[static_cast<std::size_t>(next() % u)] += 1.0;  // u is small: the modulo's bias is below 2^-40
        for (std::size_t i = 0; i < curve.size(); ++i) {
            double low = std::numeric_limits<double>::infinity();
            for (std::size_t k = 0; k < at[i].size(); ++k) {
                double num = 0, den = 0;
                for (const auto& [c, a] : at[i][k]) num += count[c] * a, den += count[c];
                low = std::min(low, den > 0 ? num / den : own[i][k]);
            }
            means[i] = low;
        }
        out[static_cast<std::size_t>(r)] = crossing_n(ns, means, threshold);
    }
    std::sort(out.begin(), out.end());
    const auto b = static_cast<double>(resamples);
    e.lo = out[static_cast<std::size_t>(std::floor(0.025 * b))];
    e.hi = out[static_cast<std::size_t>(std::ceil(0.975 * b)) - 1];
    return e;
}

CellScore cell_score(const std::string& rows) {
    static const CsvColumns columns(cell_header().substr(0, cell_header().size() - 1), cell_columns(), "results");
    static const std::size_t acc = columns["accuracy_frac"], queries = columns["queries"], status = columns["status"],
                             slot = columns["slot"];
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
        if (fields.size() <= std::max({acc, queries, status, slot})) {
            ok = false;
            continue;
        }
        ok = ok && fields[status] == "ok";
        char* e = nullptr;
        const double a = std::strtod(fields[acc].c_str(), &e);
        if (fields[acc].empty() || !std::isfinite(a)) ok = false;
        sum += a;
        s.slots.emplace_back(fields[slot], a);
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
                g.resolve = b.crossing_resolve, g.width = b.crossing_resolve_width;
                for (const auto& part : find_task(key.task.name()).slot_parts) g.parts.push_back(part.first);
                g.resolve_cap = b.crossing_resolve_seeds > 0 ? b.crossing_resolve_seeds : std::min<std::int64_t>(4 * g.cap, 1000000);
                g.resolve_probes = b.crossing_resolve_probes;
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
        Group& g = groups_[gi];
        const auto resolving = [&g](double t) { return std::find(g.resolve.begin(), g.resolve.end(), t) != g.resolve.end(); };
        // the grid's means, on the grid's seeds only
        std::vector<double> means;
        for (const auto n : g.ns) {
            const auto it = points_.find(key_at(g, n));
            means.push_back(it == points_.end() ? std::numeric_limits<double>::quiet_NaN()
                                                : point_stats(it->second.scores, static_cast<std::uint64_t>(g.seeds)).mean);
        }
        std::map<std::int64_t, std::vector<double>> near;  // n -> the thresholds (separation rule) whose bracket holds it
        std::set<std::int64_t> probes, curve_ns(g.ns.begin(), g.ns.end());
        std::vector<double> resolve_now;  // the interval rule's thresholds that have a bracket
        for (const double t : g.thresholds) {
            const auto j = crossing_bracket(means, t);
            if (!j) continue;
            ++brackets_;
            const std::int64_t lo = g.ns[*j - 1], hi = g.ns[*j];
            const bool interval = resolving(t);
            if (interval) resolve_now.push_back(t);
            near[lo];
            near[hi];
            if (!interval) near[lo].push_back(t), near[hi].push_back(t);
            for (const auto n : crossing_probe_sizes(lo, hi, g.probes)) {
                near[n];
                if (!interval) near[n].push_back(t);
                probes.insert(n);
                curve_ns.insert(n);
            }
        }
        // with crossing_resolve_probes, every n the group has run (the reading probes of earlier
        // rounds too), and the interval rule serves each of its thresholds whether or not the cells'
        // mean brackets it (a part's crossing may lie where the cells' mean has none)
        if (g.resolve_probes > 0) {
            curve_ns.insert(g.read_probes.begin(), g.read_probes.end());
            resolve_now = g.resolve;
        }
        // the interval rule: each point's target seed count (0: none asked)
        std::map<std::int64_t, std::uint64_t> resolve_to;
        if (!resolve_now.empty()) {
            // the curves the report reads: the cells' means; with slot parts, each part and their lowest
            struct Reading {
                std::vector<CurvePoint> curve;
                std::vector<double> means, se;
            };
            const std::size_t nparts = g.parts.size();
            std::vector<Reading> readings(nparts ? nparts + 1 : 1);
            std::vector<std::int64_t> xs;
            std::vector<std::uint64_t> have;
            for (const auto n : curve_ns) {
                const auto it = points_.find(key_at(g, n));
                if (it == points_.end() || it->second.scores.empty()) continue;
                const std::uint64_t m = it->second.scores.rbegin()->first + 1;
                const Stats st = point_stats(it->second.scores, m);
                if (st.ok == 0) continue;
                xs.push_back(n), have.push_back(m);
                if (!nparts) {
                    CurvePoint p;
                    p.n = n;
                    for (const auto& [seed, sc] : it->second.scores)
                        if (sc.ok) p.seeds.emplace_back(seed, sc.accuracy);
                    readings[0].curve.push_back(std::move(p));
                    readings[0].means.push_back(st.mean), readings[0].se.push_back(st.se);
                    continue;
                }
                CurvePoint lowest;
                lowest.n = n;
                double low_mean = std::numeric_limits<double>::infinity(), low_se = 0;
                for (std::size_t k = 0; k < nparts; ++k) {
                    CurvePoint p;
                    p.n = n;
                    std::map<std::uint64_t, CellScore> part;  // the part's rows as scores, for the suite's SE
                    for (const auto& [seed, sc] : it->second.scores) {
                        if (!sc.ok) continue;
                        double sum = 0;
                        int rows = 0;
                        for (const auto& [slot, a] : sc.slots)
                            if (slot == g.parts[k]) sum += a, ++rows;
                        if (rows == 0) continue;
                        CellScore one;
                        one.accuracy = sum / rows, one.ok = true;
                        one.queries = sc.queries / static_cast<double>(std::max<std::size_t>(sc.slots.size(), 1)) * rows;
                        part[seed] = one;
                        p.seeds.emplace_back(seed, one.accuracy);
                    }
                    const Stats ps = point_stats(part, m);
                    readings[k].means.push_back(ps.ok ? ps.mean : std::numeric_limits<double>::quiet_NaN());
                    readings[k].se.push_back(ps.se);
                    if (ps.ok && ps.mean < low_mean) low_mean = ps.mean, low_se = ps.se;
                    lowest.parts.push_back(p.seeds);
                    readings[k].curve.push_back(std::move(p));
                }
                readings[nparts].curve.push_back(std::move(lowest));
                readings[nparts].means.push_back(low_mean), readings[nparts].se.push_back(low_se);
            }
            const std::uint64_t cap = static_cast<std::uint64_t>(g.resolve_cap);
            for (const double t : resolve_now)
                for (const Reading& r : readings) {
                    // the points that decide n*: the two it is interpolated between, and any within the separation of t
                    std::set<std::size_t> deciding;
                    if (const auto j = crossing_bracket(r.means, t)) deciding.insert(*j - 1), deciding.insert(*j);
                    for (std::size_t i = 0; i < xs.size(); ++i)
                        if (std::fabs(r.means[i] - t) <= kCrossingSeparation * r.se[i]) deciding.insert(i);
                    bool room = false;
                    for (const auto i : deciding) room = room || have[i] < cap;
                    // reading probes: inside the reading's own bracket (every n run, every seed: as
                    // the report reads it), log-spaced, while n* is not resolved
                    std::vector<std::int64_t> inside;
                    if (g.resolve_probes > 0)
                        if (const auto j = crossing_bracket(r.means, t))
                            for (const auto n : crossing_probe_sizes(xs[*j - 1], xs[*j], g.resolve_probes))
                                if (!curve_ns.count(n)) inside.push_back(n);
                    if ((!room && inside.empty()) || crossing_estimate(r.curve, t).resolved(g.width)) continue;
                    for (const auto n : inside) probes.insert(n), g.read_probes.insert(n);
                    for (const auto i : deciding)
                        if (have[i] < cap) resolve_to[xs[i]] = std::max(resolve_to[xs[i]], std::min(2 * have[i], cap));
                }
        }
        probe_points_ += probes.size();
        std::set<std::int64_t> asked;  // the bracket's points and any other the interval rule asks of, in n order
        for (const auto& kv : near) asked.insert(kv.first);
        for (const auto& kv : resolve_to) asked.insert(kv.first);
        asked.insert(probes.begin(), probes.end());  // a reading probe (the grid's probes are in `near` already)
        for (const auto n : asked) {
            const auto nt = near.find(n);
            const std::vector<double> ts = nt == near.end() ? std::vector<double>{} : nt->second;
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
                const Stats st = point_stats(p.scores, m);
                if (st.ok == 0) continue;
                const std::uint64_t cap = static_cast<std::uint64_t>(g.cap);
                if (m < cap) {
                    bool uncertain = false;
                    for (const double t : ts) uncertain = uncertain || std::fabs(st.mean - t) <= kCrossingSeparation * st.se;
                    if (uncertain) to = std::min(2 * m, cap);
                }
                const auto r = resolve_to.find(n);
                if (r != resolve_to.end()) to = std::max(to, r->second);
                if (to <= m) continue;
                from = m;
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
