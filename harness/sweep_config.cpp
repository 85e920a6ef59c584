// memcap/harness/sweep_config.cpp — see sweep_config.hpp.
#include "harness/sweep_config.hpp"

#include "core/error.hpp"
#include "harness/readout.hpp"
#include "harness/runner.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <boost/property_tree/ini_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace memcap {
namespace {

const std::vector<std::string> kKeys = {"memories", "tasks", "budgets", "n", "seeds", "d", "readout"};

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
    return out;
}

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

/// A value with any trailing `; comment` or `# comment` removed, trimmed.
std::string strip_comment(const std::string& value) {
    std::string v = value.substr(0, value.find_first_of(";#"));
    const auto last = v.find_last_not_of(" \t\r");
    return last == std::string::npos ? std::string() : v.substr(0, last + 1);
}

using Values = std::map<std::string, std::string>;

/// The keys of one section, checked against kKeys.
Values section_values(const boost::property_tree::ptree& section, const std::string& where) {
    Values out;
    for (const auto& [key, child] : section) {
        if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
            throw UsageError(where + ": unknown key '" + key + "' (accepted: " + join(kKeys) + ")");
        const std::string value = strip_comment(child.data());
        if (value.empty()) throw UsageError(where + ": key '" + key + "' has no value");
        out[key] = value;
    }
    return out;
}

SweepBlock make_block(const std::string& name, const Values& defaults, const Values& own, const std::string& where) {
    Values v = defaults;
    for (const auto& kv : own) v[kv.first] = kv.second;
    auto need = [&](const std::string& key) -> const std::string& {
        const auto it = v.find(key);
        if (it == v.end()) throw UsageError("key '" + key + "' is required (in the block or in [sweep])");
        return it->second;
    };
    const std::string at = where + ": ";
    SweepBlock b;
    b.name = name;
    try {
        for (const auto& s : words(need("memories"))) b.memories.push_back(parse_memory_spec(s));
        for (const auto& s : words(need("tasks"))) b.tasks.push_back(parse_task_spec(s));
        b.ns = parse_int_list(need("n"), "n", 100000000);
        if (v.count("budgets")) {
            b.budgets.clear();
            for (const auto& s : words(v["budgets"])) {
                if (s == "natural") b.budgets.push_back(std::nullopt);
                else
                    for (auto x : parse_int_list(s, "budgets", 4000000000LL)) b.budgets.push_back(x);
            }
        } else {
            b.budgets = {std::nullopt};
        }
        if (v.count("seeds")) {
            const auto s = parse_int_list(v["seeds"], "seeds", 1000000);
            if (s.size() != 1) throw UsageError("seeds: give one count S (seeds 0..S-1), not a list");
            b.seeds = s[0];
        }
        if (v.count("d")) {
            b.ds.clear();
            for (auto x : parse_int_list(v["d"], "d", 1 << 20)) b.ds.push_back(static_cast<int>(x));
        }
        for (const auto& r : words(v.count("readout") ? v["readout"] : std::string("auto")))
            b.readouts.push_back(parse_readout_spec(r));
    } catch (const UsageError& e) {
        throw UsageError(at + e.what());
    }
    return b;
}

std::vector<CellSpec> block_cells(const SweepBlock& b) {
    std::vector<CellSpec> cells;
    for (const auto& readout : b.readouts)
        for (const int d : b.ds)
            for (const auto& task : b.tasks)
                for (const auto& memory : b.memories)
                    for (const auto& budget : b.budgets)
                        for (const auto n : b.ns)
                            for (std::int64_t seed = 0; seed < b.seeds; ++seed)
                                cells.push_back({memory, task, readout, budget, d, n, static_cast<std::uint64_t>(seed)});
    return cells;
}

std::string cell_key(const CellSpec& c) {
    return c.memory.canonical() + " " + c.task.canonical() + " readout=" + c.readout.canonical() +
           " budget=" + (c.budget_floats ? std::to_string(*c.budget_floats) : std::string("natural")) +
           " d=" + std::to_string(c.d) + " n=" + std::to_string(c.n) + " seed=" + std::to_string(c.seed);
}

}  // namespace

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

std::vector<CellSpec> SweepConfig::cells() const {
    std::vector<CellSpec> all;
    for (const auto& b : blocks) {
        auto c = block_cells(b);
        all.insert(all.end(), c.begin(), c.end());
    }
    return all;
}

nlohmann::ordered_json SweepConfig::canonical() const {
    using J = nlohmann::ordered_json;
    J blocks_json = J::array();
    for (const auto& b : blocks) {
        J j;
        j["name"] = b.name;
        j["memories"] = J::array();
        for (const auto& m : b.memories) j["memories"].push_back(m.canonical());
        j["tasks"] = J::array();
        for (const auto& t : b.tasks) j["tasks"].push_back(t.canonical());
        j["budgets_floats"] = J::array();
        for (const auto& x : b.budgets) j["budgets_floats"].push_back(x ? J(*x) : J());
        j["n"] = b.ns;
        j["seeds"] = b.seeds;
        j["d"] = b.ds;
        j["readout"] = J::array();
        for (const auto& r : b.readouts) j["readout"].push_back(r.canonical());
        blocks_json.push_back(j);
    }
    return J{{"blocks", blocks_json}};
}

SweepConfig load_sweep_config(const std::string& path) {
    const std::string where = "config '" + path + "'";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw UsageError(where + " does not exist");
    if (std::filesystem::is_directory(path, ec)) throw UsageError(where + " is a directory, not a file");
    std::ifstream in(path);
    if (!in) throw UsageError(where + " cannot be read");
    boost::property_tree::ptree tree;
    try {
        boost::property_tree::read_ini(in, tree);
    } catch (const boost::property_tree::ini_parser_error& e) {
        throw UsageError(where + ", line " + std::to_string(e.line()) + ": " + e.message());
    }
    if (in.bad()) throw UsageError(where + " cannot be read");

    SweepConfig config;
    config.path = path;
    config.name = std::filesystem::path(path).stem().string();
    if (config.name.empty()) throw UsageError(where + ": cannot name the results after this file");

    Values defaults;
    std::vector<std::pair<std::string, const boost::property_tree::ptree*>> blocks;
    for (const auto& [name, section] : tree) {
        if (section.empty() && !section.data().empty())
            throw UsageError(where + ": key '" + name + "' outside any section (put it under [sweep] or a [block NAME])");
        if (name == "sweep") {
            defaults = section_values(section, where + " [sweep]");
        } else if (name.rfind("block ", 0) == 0 && name.find_first_not_of(' ', 6) != std::string::npos) {
            blocks.emplace_back(name.substr(name.find_first_not_of(' ', 6)), &section);
        } else {
            throw UsageError(where + ": unknown section [" + name + "] (accepted: [sweep], [block NAME])");
        }
    }
    if (blocks.empty()) throw UsageError(where + " has no [block NAME] section: nothing to sweep");
    for (const auto& [name, section] : blocks) {
        const std::string at = where + " [block " + name + "]";
        config.blocks.push_back(make_block(name, defaults, section_values(*section, at), at));
    }

    // Count before expanding: a range or seed count too large is refused, not allocated.
    std::int64_t total = 0;
    for (const auto& b : config.blocks) {
        const auto size = [](const auto& v) { return static_cast<std::int64_t>(v.size()); };
        total += checked_grid_size({size(b.readouts), size(b.ds), size(b.tasks), size(b.memories), size(b.budgets),
                                    size(b.ns), b.seeds},
                                   where + " [block " + b.name + "]");
        if (total > kMaxCells)
            throw UsageError(where + " has more than " + std::to_string(kMaxCells) + " cells; split it into several sweeps");
    }

    // A cell listed twice would give duplicate rows: refuse, naming both places.
    std::map<std::string, std::string> seen;
    for (const auto& b : config.blocks)
        for (const auto& c : block_cells(b)) {
            const auto [it, fresh] = seen.emplace(cell_key(c), b.name);
            if (!fresh)
                throw UsageError(where + ": cell (" + it->first + ") appears twice, " +
                                 (it->second == b.name ? "in [block " + b.name + "]"
                                                       : "in [block " + it->second + "] and [block " + b.name + "]"));
        }
    return config;
}

}  // namespace memcap
