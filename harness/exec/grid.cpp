// memcap/harness/exec/grid.cpp — see grid.hpp.
#include "harness/exec/grid.hpp"

#include "core/error.hpp"
#include "harness/eval/readout.hpp"
#include "harness/exec/tuning.hpp"
#include "memories/precision.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace memcap {
std::vector<std::string> split_words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

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
    for (const auto& tok : split_words(text)) {
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

std::int64_t parse_positive(const std::string& text, const std::string& key, std::int64_t max) {
    if (text.find(',') != std::string::npos)
        throw UsageError(key + ": '" + text + "' is not an integer; give several values separated by spaces, e.g. " + key +
                         " 4 8 16");
    const std::int64_t v = parse_int(text, key);
    if (v < 1) throw UsageError(key + ": '" + text + "' must be at least 1");
    if (v > max) throw UsageError(key + ": '" + text + "' exceeds the limit of " + std::to_string(max));
    return v;
}

std::int64_t parse_count(const std::string& text, const std::string& key, std::int64_t max) {
    if (split_words(text).size() > 1 || text.find("..") != std::string::npos) throw UsageError(key + ": give one count, not a list");
    return parse_positive(text, key, max);
}

std::vector<std::int64_t> parse_sizes(const std::vector<std::string>& texts, const std::string& key) {
    std::vector<std::int64_t> out;
    for (const auto& text : texts) {
        if (split_words(text).empty()) parse_positive(text, key, 100000000);  // an empty word: refused as not an integer
        for (const auto& s : split_words(text))  // a value, or a range: 4..512*2, 1..8, 10..50+10
            if (s.find("..") != std::string::npos)
                for (const auto v : parse_int_list(s, key, 100000000)) out.push_back(v);
            else out.push_back(parse_positive(s, key, 100000000));
    }
    return out;
}

std::vector<std::optional<std::int64_t>> parse_budgets(const std::vector<std::string>& texts, const std::string& key) {
    std::vector<std::optional<std::int64_t>> out;
    for (const auto& text : texts)
        for (const auto& s : split_words(text).empty() ? std::vector<std::string>{text} : split_words(text)) {
            if (s == "natural") {
                out.push_back(std::nullopt);
                continue;
            }
            try {
                if (s.find("..") != std::string::npos)  // a range: 256..16384*4
                    for (const auto b : parse_int_list(s, key, kMaxBudgetFloats)) out.push_back(b);
                else out.push_back(parse_positive(s, key, kMaxBudgetFloats));
            } catch (const UsageError& e) {
                throw UsageError(std::string(e.what()) + " (a number of floats, or 'natural' for the backend's natural size)");
            }
        }
    if (out.empty()) out.push_back(std::nullopt);
    return out;
}

std::vector<std::optional<std::int64_t>> parse_budget_bits(const std::vector<std::string>& texts, const std::string& key) {
    std::vector<std::optional<std::int64_t>> out;
    for (const auto& text : texts)
        for (const auto& s : split_words(text).empty() ? std::vector<std::string>{text} : split_words(text)) {
            std::vector<std::int64_t> bits;
            try {
                if (s.find("..") != std::string::npos) bits = parse_int_list(s, key, budget_bits(kMaxBudgetFloats));
                else bits = {parse_positive(s, key, budget_bits(kMaxBudgetFloats))};
            } catch (const UsageError& e) {
                throw UsageError(std::string(e.what()) + " (a number of bits, a multiple of " + std::to_string(kBitsPerFloat) + ")");
            }
            for (const auto b : bits) {
                const std::int64_t floats = budget_of_bits(b);
                if (budget_bits(floats) != b)
                    throw UsageError(key + ": " + std::to_string(b) + " bits is not a multiple of " + std::to_string(kBitsPerFloat) +
                                     " (a float's bits; give " + std::to_string(budget_bits(floats)) + " or " +
                                     std::to_string(budget_bits(floats + 1)) + ")");
                out.push_back(floats);
            }
        }
    return out;
}

namespace {

std::string several_run(const std::string& key, const std::string& first, const std::string& rest) {
    return "repeat " + key + " (e.g. " + key + " " + first + " " + key + " " + rest + ")";
}
std::string several_python(const std::string& key, const std::string& first, const std::string& rest) {
    return "give a list (e.g. " + key + "=['" + first + "', '" + rest + "'])";
}
std::string several_sweep(const std::string& key, const std::string& first, const std::string& rest) {
    return "separate them with spaces (e.g. " + key + " = " + first + " " + rest + ")";
}

/// Specs parsed with `parse`; when one fails and holds a comma (and no parameters), says how to give several.
template <class Parse>
std::vector<Spec> specs(const std::vector<std::string>& texts, Parse parse, const std::string& flag, const GridKeys& keys) {
    std::vector<Spec> out;
    for (const auto& text : texts)
        for (const auto& t : split_words(text)) try {
                out.push_back(parse(t));
            } catch (const UsageError& e) {
                if (t.find(',') == std::string::npos || t.find(':') != std::string::npos) throw;
                throw UsageError(std::string(e.what()) + "; for several, " +
                                 keys.several(flag, t.substr(0, t.find(',')), t.substr(t.find(',') + 1)));
            }
    return out;
}

/// UsageError when `values` (as text) repeats one: its cells would run twice.
void once(const std::vector<std::string>& values, const std::string& key) {
    std::set<std::string> seen;
    for (const auto& v : values)
        if (!seen.insert(v).second)
            throw UsageError(key + ": '" + v + "' is given twice (each cell would run twice); give it once");
}

}  // namespace

const GridKeys kRunKeys{"--memory", "--task", "--n", "--budget", "--seeds", "--d", "--tuning-seeds", "--readout",
                        "--on-tuning-seeds", "--budget-bits", "`memcap list`", several_run};
const GridKeys kPythonKeys{"memories", "tasks", "n", "budgets", "seeds", "d", "tuning_seeds", "readout",
                           "on_tuning_seeds", "budget_bits", "memcap.list()", several_python};
const GridKeys kSweepKeys{"memories", "tasks", "n", "budgets", "seeds", "d", "tuning_seeds", "readout",
                          "on_tuning_seeds", "budget_bits", "`memcap list`", several_sweep};

namespace {

/// A memory spec text given without `precision`, made to race it (a grid whose budgets are bits).
std::string with_precision_raced(const std::string& text) {
    const RawSpec raw = split_spec(text, "memory");
    for (const auto& kv : raw.pairs)
        if (kv.first == kPrecisionKey) return text;
    return text + (raw.pairs.empty() ? ":" : ",") + kPrecisionKey + "=best";
}

/// A memory spec text with every setting `d = best` races (raced_at_best_width) that it leaves
/// out given as `best`: `delta` becomes `delta:beta=best`, so the implicit race and the
/// explicit one are the same cells, canonical spec and `tuned` column. An unknown name is
/// left as it is (parse_memory_spec names the problem).
std::string with_settings_raced(const std::string& text) {
    const RawSpec raw = split_spec(text, "memory");
    const MemoryEntry* entry = nullptr;
    try {
        entry = &find_memory(raw.name);
    } catch (const UsageError&) {
        return text;
    }
    std::string out = text;
    bool first = raw.pairs.empty();
    for (const auto& p : entry->params) {
        if (!raced_at_best_width(p)) continue;
        if (std::any_of(raw.pairs.begin(), raw.pairs.end(), [&](const auto& kv) { return kv.first == p.key; })) continue;
        out += (first ? ":" : ",") + p.key + "=best";
        first = false;
    }
    return out;
}

/// Whether a width text chooses the width on tuning seeds (GridBlock::set_widths).
bool widths_best(const std::string& text) { return text == "best" || text.rfind("best:", 0) == 0; }

}  // namespace

GridBlock build_grid(const GridRequest& r, const GridKeys& keys, const std::string& name) {
    GridBlock g;
    g.name = name;
    const bool cli = keys.several == several_run;
    if (!r.budgets.empty() && !r.budget_bits.empty())
        throw UsageError("give " + keys.budgets + " (floats) or " + keys.budget_bits + " (bits), not both");
    g.budgets_in_bits = !r.budget_bits.empty();
    // With the width chosen (d = best) every setting the memory declares candidates for and the
    // spec leaves out is chosen with it (with_settings_raced); a fixed width leaves them at their defaults.
    const bool d_best = widths_best(r.d);
    const auto parse_memory = [&](const std::string& text) {
        const std::string raced = d_best ? with_settings_raced(text) : text;
        return parse_memory_spec(g.budgets_in_bits ? with_precision_raced(raced) : raced);
    };
    g.memories = specs(r.memories, parse_memory, cli ? "-m" : keys.memories, keys);
    g.tasks = specs(r.tasks, parse_task_spec, cli ? "-t" : keys.tasks, keys);
    if (g.memories.empty()) {
        std::string known;
        for (const auto& n : memory_names()) known += (known.empty() ? "" : ", ") + n;
        throw UsageError(keys.memories + " is required (known: " + known + ")");
    }
    if (g.tasks.empty()) throw UsageError(keys.tasks + " is required (see " + keys.list + ")");
    g.ns = parse_sizes(r.ns, keys.n);
    if (g.ns.empty()) throw UsageError(keys.n + " is required (one or more task sizes)");
    g.budgets = g.budgets_in_bits ? parse_budget_bits(r.budget_bits, keys.budget_bits) : parse_budgets(r.budgets, keys.budgets);
    if (!r.seeds.empty()) g.seeds = parse_count(r.seeds, keys.seeds, 1000000);
    if (!r.d.empty()) try {
            g.set_widths(r.d, keys.d);
        } catch (const UsageError& e) {
            throw UsageError(std::string(e.what()) + " (or 'best', or 'best:LIST' such as best:8..512*2)");
        }
    if (!r.tuning_seeds.empty()) g.tuning_seeds = parse_count(r.tuning_seeds, keys.tuning_seeds, 1000);
    for (const auto& text : r.readouts)
        for (const auto& w : split_words(text)) g.readouts.push_back(parse_readout_spec(w));
    if (g.readouts.empty()) g.readouts = {parse_readout_spec("auto")};

    // A value given twice would run its cells twice, and `aggregate` would count the copies
    // as more seeds (too narrow an interval).
    std::vector<std::string> texts;
    for (const auto& m : g.memories) texts.push_back(m.canonical());
    once(texts, keys.memories);
    texts.clear();
    for (const auto& t : g.tasks) texts.push_back(t.canonical());
    once(texts, keys.tasks);
    texts.clear();
    for (const auto n : g.ns) texts.push_back(std::to_string(n));
    once(texts, keys.n);
    texts.clear();
    for (const auto& b : g.budgets) texts.push_back(b ? std::to_string(*b * (g.budgets_in_bits ? 32 : 1)) : "natural");
    once(texts, g.budgets_in_bits ? keys.budget_bits : keys.budgets);
    texts.clear();
    for (const int d : g.ds) texts.push_back(std::to_string(d));
    once(texts, keys.d);
    texts.clear();
    for (const auto& x : g.readouts) texts.push_back(x.canonical());
    once(texts, keys.readout);
    // `auto` is the native readout or the probe, by memory: with the one it resolves to, the same cells
    for (const auto& m : g.memories) {
        std::set<std::string> seen;
        for (const auto& x : g.readouts)
            if (!seen.insert(resolve_readout(x, m.name()).canonical()).second)
                throw UsageError(keys.readout + ": '" + resolve_readout(x, m.name()).canonical() +
                                 "' is given twice for memory '" + m.canonical() +
                                 "' (auto is its native readout or the probe; each cell would run twice); give it once");
    }

    if (r.on_tuning_seeds) {
        if (g.d_best) throw UsageError(keys.on_tuning_seeds + ": the tuning seeds cannot score a cell whose width is chosen on them (d=best)");
        for (const auto& m : g.memories)
            if (!m.best_keys().empty())
                throw UsageError(keys.on_tuning_seeds + ": the tuning seeds cannot score memory '" + m.canonical() +
                                 "', whose settings are chosen on them" +
                                 (g.budgets_in_bits ? " (" + keys.budget_bits + " races the precision of a memory given without precision=)" : ""));
        g.first_seed = kTuningSeedBase;
    }
    if (g.d_best && std::find(g.budgets.begin(), g.budgets.end(), std::nullopt) != g.budgets.end())
        throw UsageError(keys.d + " best chooses the width at a budget, and " + keys.budgets +
                         (r.budgets.empty() ? " is not given (the natural size, whose state grows with d)"
                                            : " includes 'natural' (whose state grows with d)") +
                         ": give " + keys.budgets + " numbers only, or a fixed " + keys.d);
    return g;
}

void GridBlock::set_widths(const std::string& text, const std::string& what) {
    d_best = widths_best(text);
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

nlohmann::ordered_json GridBlock::manifest(bool sweep) const {
    using J = nlohmann::ordered_json;
    J j;
    if (sweep) j["name"] = name;
    j["memories"] = J::array(), j["tasks"] = J::array(), j["budgets_floats"] = J::array();
    for (const auto& m : memories) j["memories"].push_back(m.canonical());
    for (const auto& t : tasks) j["tasks"].push_back(t.canonical());
    for (const auto& b : budgets) j["budgets_floats"].push_back(b ? J(*b) : J());
    if (sweep && budgets_in_bits) j["budgets_in_bits"] = true;
    j["n"] = ns;
    j["seeds"] = seeds;
    j["d"] = d_best ? J(widths_text()) : ds.size() == 1 && !sweep ? J(ds[0]) : J(ds);
    bool tuned = d_best;
    for (const auto& m : memories) tuned = tuned || !m.best_keys().empty();
    if (sweep) {
        if (tuned) j["tuning_seeds"] = tuning_seeds;
        j["readout"] = J::array();
        for (const auto& r : readouts) j["readout"].push_back(r.canonical());
        if (!crossing.empty()) {  // only then: a sweep without it keeps the manifest it had
            j["crossing"] = crossing;
            j["crossing_probes"] = crossing_probes;
            j["crossing_seeds"] = crossing_seeds;
            if (!crossing_resolve.empty()) {  // likewise
                j["crossing_resolve"] = crossing_resolve;
                j["crossing_resolve_width"] = crossing_resolve_width;
                j["crossing_resolve_seeds"] = crossing_resolve_seeds;
                if (crossing_resolve_probes > 0) j["crossing_resolve_probes"] = crossing_resolve_probes;  // likewise
            }
        }
        return j;
    }
    j["readout"] = readouts[0].canonical();
    if (tuned) j["tuning_seeds"] = tuning_seeds;
    if (first_seed != 0) j["first_seed"] = first_seed;
    if (budgets_in_bits) j["budgets_in_bits"] = true;
    return j;
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
                                c.seed = first_seed + static_cast<std::uint64_t>(seed);
                                out.push_back(c);
                            }
                        }
    return out;
}

ResolvedCells check_cells(const std::vector<CellSpec>& cells, Races* races) {
    // Each group resolved (and checked) once; the seeds of a block follow each other and
    // share it. A cell that still needs tuning has its group's race built instead.
    Races own;
    Races& raced = races ? *races : own;
    ResolvedCells out(cells.size());
    std::map<CellSpec, std::shared_ptr<const ResolvedCell>, SameGroupOrder> seen;  // by group: seed 0
    for (std::size_t i = 0; i < cells.size(); ++i) {
        const CellSpec& c = cells[i];
        if (i > 0 && same_but_seed(c, cells[i - 1])) {  // the group of the cell before
            out[i] = out[i - 1];
            continue;
        }
        if (c.needs_tuning()) {
            raced.add(c);
            continue;
        }
        CellSpec group = c;
        group.seed = 0;
        auto& r = seen[group];
        if (!r) {
            r = resolve_cell(c);
            check_fits(*r);
        }
        out[i] = r;
    }
    return out;
}

}  // namespace memcap
