// memcap/harness/exec/grid.cpp — see grid.hpp.
#include "harness/exec/grid.hpp"

#include "core/error.hpp"
#include "harness/exec/tuning.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace memcap {
namespace {

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

}  // namespace

std::int64_t checked_grid_size(const std::vector<std::int64_t>& sizes, const std::string& what) {
    std::int64_t total = 1;
    for (const auto n : sizes) {
        if (n == 0) return 0;
        if (total > kMaxCells / n)
            throw UsageError(what + " has more than " + std::to_string(kMaxCells) +
                             " cells; split it or use fewer values (seeds, n, budgets, ...)");
        total *= n;
    }
    return total;
}

std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& what, std::int64_t max) {
    std::vector<std::int64_t> out;
    auto check = [&](std::int64_t x, const std::string& tok) {
        if (x < 1) throw UsageError(what + ": '" + tok + "' must be at least 1");
        if (x > max) throw UsageError(what + ": '" + tok + "' exceeds the limit of " + std::to_string(max));
        return x;
    };
    for (const auto& tok : words(text)) {
        const auto dots = tok.find("..");
        if (dots == std::string::npos) {
            out.push_back(check(parse_int(tok, what), tok));
            continue;
        }
        const std::string lo_text = tok.substr(0, dots), rest = tok.substr(dots + 2);
        const auto op = rest.find_first_of("*+");
        const std::string hi_text = rest.substr(0, op);
        const std::int64_t lo = check(parse_int(lo_text, what), lo_text), hi = check(parse_int(hi_text, what), hi_text);
        if (hi < lo) throw UsageError(what + ": range '" + tok + "' ends below its start");
        const bool geometric = op != std::string::npos && rest[op] == '*';
        std::int64_t step = 1;
        if (op != std::string::npos) step = parse_int(rest.substr(op + 1), what);
        if (geometric ? step < 2 : step < 1)
            throw UsageError(what + ": range '" + tok + "' needs a " + (geometric ? "factor of at least 2" : "step of at least 1"));
        for (std::int64_t x = lo; x <= hi; x = geometric ? x * step : x + step) {
            out.push_back(x);
            if (out.size() > 1000000) throw UsageError(what + ": range '" + tok + "' has more than a million values");
            if (geometric ? x > hi / step : x > hi - step) break;
        }
    }
    if (out.empty()) throw UsageError(what + ": no values");
    return out;
}

void GridBlock::set_widths(const std::string& text, const std::string& what) {
    d_best = text == "best" || text.rfind("best:", 0) == 0;
    d_candidates.clear();
    if (!d_best) {
        ds.clear();
        for (auto x : parse_int_list(text, what, 1 << 20)) ds.push_back(static_cast<int>(x));
        return;
    }
    ds = {0};
    if (text.size() > 5) {
        std::string list = text.substr(5);
        std::replace(list.begin(), list.end(), ',', ' ');
        for (auto x : parse_int_list(list, what, 1 << 20)) d_candidates.push_back(static_cast<int>(x));
    }
}

std::string GridBlock::widths_text() const {
    std::string out = d_best ? "best" : "";
    for (std::size_t i = 0; i < (d_best ? d_candidates.size() : ds.size()); ++i)
        out += (i == 0 ? (d_best ? ":" : "") : (d_best ? "," : " ")) + std::to_string(d_best ? d_candidates[i] : ds[i]);
    return out;
}

std::int64_t GridBlock::size(const std::string& what) const {
    const auto count = [](const auto& v) { return static_cast<std::int64_t>(v.size()); };
    return checked_grid_size({count(readouts), count(ds), count(tasks), count(memories), count(budgets), count(ns), seeds},
                             what);
}

CellSpec GridBlock::tuned_cell(CellSpec c) const {
    if (d_best) c.d_candidates = d_candidates;
    if (d_best || !c.memory.best_keys().empty()) c.tuning_seeds = static_cast<int>(tuning_seeds);
    return c;
}

std::vector<CellSpec> GridBlock::cells() const {
    std::vector<CellSpec> out;
    out.reserve(static_cast<std::size_t>(
        size(name.empty() ? "the grid (memories x tasks x budgets x n x seeds)" : "[block " + name + "]")));
    for (const auto& readout : readouts)
        for (const int d : ds)
            for (const auto& task : tasks)
                for (const auto& memory : memories)
                    for (const auto& budget : budgets)
                        for (const auto n : ns) {
                            if (seeds < 1) continue;
                            // the seeds' cells differ in the seed only: made (and their readout resolved) once
                            CellSpec c = tuned_cell(make_cell(memory, task, readout, budget, d, n, 0));
                            for (std::int64_t seed = 0; seed < seeds; ++seed) {
                                c.seed = static_cast<std::uint64_t>(seed);
                                out.push_back(c);
                            }
                        }
    return out;
}

void check_cells(const std::vector<CellSpec>& cells) {
    std::set<std::string> checked;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        const CellSpec& c = cells[i];
        if (i > 0 && same_but_seed(c, cells[i - 1])) continue;  // a block's seeds follow each other: no label to build
        if (checked.insert(group_label(c)).second) c.needs_tuning() ? check_candidates(c) : check_cell(c);
    }
}

}  // namespace memcap
