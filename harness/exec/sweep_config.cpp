// memcap/harness/exec/sweep_config.cpp — see sweep_config.hpp.
#include "harness/exec/sweep_config.hpp"

#include "core/error.hpp"
#include "harness/eval/readout.hpp"
#include "harness/exec/plugins.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <boost/property_tree/ini_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace memcap {
namespace {

const std::vector<std::string> kKeys = {"memories", "tasks",        "budgets",  "budget_bits",     "n",
                                        "seeds",    "d",            "readout",  "tuning_seeds",    "plugins",
                                        "crossing", "crossing_probes", "crossing_seeds", "crossing_resolve",
                                        "crossing_resolve_width", "crossing_resolve_seeds", "crossing_resolve_probes"};

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
    return out;
}

/// A value with any trailing `; comment` or `# comment` removed, trimmed.
std::string strip_comment(const std::string& value) {
    std::string v = value.substr(0, value.find_first_of(";#"));
    const auto last = v.find_last_not_of(" \t\r");
    return last == std::string::npos ? std::string() : v.substr(0, last + 1);
}

using Values = std::map<std::string, std::string>;

/// The thresholds of `crossing` (or `key`): numbers strictly between 0 and 1, each once, in ascending order.
std::vector<double> parse_thresholds(const std::string& text, const std::string& key = "crossing") {
    std::vector<double> out;
    for (const auto& w : split_words(text)) {
        char* end = nullptr;
        errno = 0;
        const double t = std::strtod(w.c_str(), &end);
        if (end != w.c_str() + w.size() || errno == ERANGE || !std::isfinite(t) || !(t > 0 && t < 1))
            throw UsageError(key + ": '" + w + "' is not an accuracy threshold strictly between 0 and 1");
        if (std::find(out.begin(), out.end(), t) != out.end()) throw UsageError(key + ": '" + w + "' is given twice");
        out.push_back(t);
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// `crossing_resolve_width`: a fraction of n* strictly between 0 and 1.
double parse_width(const std::string& text) {
    char* end = nullptr;
    errno = 0;
    const double w = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(w) || !(w > 0 && w < 1))
        throw UsageError("crossing_resolve_width: '" + text + "' is not a fraction of n* strictly between 0 and 1");
    return w;
}

/// A block's crossing keys (`v`: the block's values with the defaults; `own`: the block's own).
void set_crossing(GridBlock& b, const Values& v, const Values& own) {
    const bool on = v.count("crossing") > 0;
    for (const char* key : {"crossing_probes", "crossing_seeds", "crossing_resolve"})
        if (own.count(key) && !on) throw UsageError(std::string("key '") + key + "' needs 'crossing' (the thresholds) in the block or in [sweep]");
    for (const char* key : {"crossing_resolve_width", "crossing_resolve_seeds", "crossing_resolve_probes"})
        if (own.count(key) && !v.count("crossing_resolve"))
            throw UsageError(std::string("key '") + key + "' needs 'crossing_resolve' (the thresholds) in the block or in [sweep]");
    if (!on) return;
    b.crossing = parse_thresholds(v.at("crossing"));
    if (v.count("crossing_probes")) b.crossing_probes = static_cast<int>(parse_positive(v.at("crossing_probes"), "crossing_probes", 64));
    b.crossing_seeds = std::min<std::int64_t>(4 * b.seeds, 1000000);
    if (v.count("crossing_seeds")) {
        b.crossing_seeds = parse_positive(v.at("crossing_seeds"), "crossing_seeds", 1000000);
        if (b.crossing_seeds < b.seeds)
            throw UsageError("crossing_seeds: " + std::to_string(b.crossing_seeds) + " is below the block's seeds (" +
                             std::to_string(b.seeds) + "): it caps the scored seeds near a crossing, the grid's included");
    }
    if (v.count("crossing_resolve")) {
        b.crossing_resolve = parse_thresholds(v.at("crossing_resolve"), "crossing_resolve");
        for (const double t : b.crossing_resolve)
            if (std::find(b.crossing.begin(), b.crossing.end(), t) == b.crossing.end())
                throw UsageError("crossing_resolve: " + v.at("crossing_resolve") + " is not among the block's crossing thresholds (" +
                                 v.at("crossing") + ")");
        if (v.count("crossing_resolve_width")) b.crossing_resolve_width = parse_width(v.at("crossing_resolve_width"));
        b.crossing_resolve_seeds = std::min<std::int64_t>(4 * b.crossing_seeds, 1000000);
        if (v.count("crossing_resolve_seeds")) {
            b.crossing_resolve_seeds = parse_positive(v.at("crossing_resolve_seeds"), "crossing_resolve_seeds", 1000000);
            if (b.crossing_resolve_seeds < b.crossing_seeds)
                throw UsageError("crossing_resolve_seeds: " + std::to_string(b.crossing_resolve_seeds) +
                                 " is below the block's crossing_seeds (" + std::to_string(b.crossing_seeds) + ")");
        }
        if (v.count("crossing_resolve_probes"))
            b.crossing_resolve_probes = static_cast<int>(parse_positive(v.at("crossing_resolve_probes"), "crossing_resolve_probes", 64));
    }
    if (b.ns.size() < 2)
        throw UsageError("crossing: the block has one n (" + std::to_string(b.ns[0]) + "); a crossing is bracketed by two");
}

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

GridBlock make_block(const std::string& name, const Values& defaults, const Values& own, const std::string& where) {
    Values v = defaults;
    // A block's budgets, in floats or in bits, replace the defaults' in either unit.
    if (own.count("budgets") || own.count("budget_bits")) v.erase("budgets"), v.erase("budget_bits");
    for (const auto& kv : own) v[kv.first] = kv.second;
    auto need = [&](const std::string& key) -> const std::string& {
        const auto it = v.find(key);
        if (it == v.end()) throw UsageError("key '" + key + "' is required (in the block or in [sweep])");
        return it->second;
    };
    const std::string at = where + ": ";
    const auto get = [&](const std::string& key) { return v.count(key) ? v[key] : std::string(); };
    const auto list = [&](const std::string& key) { return v.count(key) ? std::vector<std::string>{v[key]} : std::vector<std::string>{}; };
    GridRequest request;
    request.memories = list("memories"), request.tasks = list("tasks"), request.ns = list("n");
    request.budgets = list("budgets"), request.readouts = list("readout");
    request.budget_bits = list("budget_bits");
    request.seeds = get("seeds"), request.d = get("d"), request.tuning_seeds = get("tuning_seeds");
    try {
        need("memories"), need("tasks"), need("n");
        GridBlock b = build_grid(request, kSweepKeys, name);
        set_crossing(b, v, own);
        return b;
    } catch (const UsageError& e) {
        throw UsageError(at + e.what());
    }
}

/// Each dimension of a block's grid as comparable text: (readout resolved for the memory,
/// memory) pairs — readout-major, memory-minor, as the cells nest — then d, task, budget, n.
/// `auto` and the readout it resolves to are the same cell, so they compare equal.
std::array<std::vector<std::string>, 5> dimension_keys(const GridBlock& b) {
    std::array<std::vector<std::string>, 5> k;
    for (const auto& r : b.readouts)
        for (const auto& m : b.memories) k[0].push_back(resolve_readout(r, m.name()).canonical() + " " + m.canonical());
    for (const int d : b.ds) k[1].push_back(b.d_best ? b.widths_text() : std::to_string(d));
    for (const auto& t : b.tasks) k[2].push_back(t.canonical());
    for (const auto& x : b.budgets) k[3].push_back(x ? std::to_string(*x) : std::string("natural"));
    for (const auto n : b.ns) k[4].push_back(std::to_string(n));
    return k;
}

/// The [sweep] section's sizes, checked where they are written (not in every block that inherits them).
void check_defaults(const Values& v, const std::string& where) {
    try {
        if (v.count("n")) parse_sizes({v.at("n")}, "n");
        if (v.count("d")) GridBlock().set_widths(v.at("d"), "d");
        if (v.count("seeds")) parse_count(v.at("seeds"), "seeds", 1000000);
        if (v.count("tuning_seeds")) parse_count(v.at("tuning_seeds"), "tuning_seeds", 1000);
        if (v.count("budgets")) parse_budgets({v.at("budgets")}, "budgets");
        if (v.count("budget_bits")) parse_budget_bits({v.at("budget_bits")}, "budget_bits");
        if (v.count("crossing")) parse_thresholds(v.at("crossing"));
        if (v.count("crossing_probes")) parse_positive(v.at("crossing_probes"), "crossing_probes", 64);
        if (v.count("crossing_seeds")) parse_positive(v.at("crossing_seeds"), "crossing_seeds", 1000000);
        if (v.count("crossing_resolve")) parse_thresholds(v.at("crossing_resolve"), "crossing_resolve");
        if (v.count("crossing_resolve_width")) parse_width(v.at("crossing_resolve_width"));
        if (v.count("crossing_resolve_seeds")) parse_positive(v.at("crossing_resolve_seeds"), "crossing_resolve_seeds", 1000000);
        if (v.count("crossing_resolve_probes")) parse_positive(v.at("crossing_resolve_probes"), "crossing_resolve_probes", 64);
    } catch (const UsageError& e) {
        throw UsageError(where + ": " + e.what());
    }
}

/// The block's cell at list positions `at` (as in dimension_keys), seed 0.
CellSpec cell_at(const GridBlock& b, const std::array<std::size_t, 5>& at) {
    const std::size_t m = b.memories.size();
    return make_cell(b.memories[at[0] % m], b.tasks[at[2]], b.readouts[at[0] / m], b.budgets[at[3]], b.ds[at[1]],
                     b.ns[at[4]], 0);
}

/// True when `s` is valid UTF-8 without control characters (it goes into JSON manifests).
bool printable_utf8(const std::string& s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7f) return false;
            ++i;
            continue;
        }
        const std::size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
        if (len == 0 || (len == 3 && c >= 0xf0) || i + len > s.size()) return false;
        std::uint32_t cp = c & (0x7f >> len);
        for (std::size_t k = 1; k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3f);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        i += len;
    }
    return true;
}

}  // namespace

std::vector<CellSpec> SweepConfig::cells() const {
    std::vector<CellSpec> all;
    for (const auto& b : blocks) {
        auto c = b.cells();
        all.insert(all.end(), std::make_move_iterator(c.begin()), std::make_move_iterator(c.end()));
    }
    return all;
}

nlohmann::ordered_json SweepConfig::canonical() const {
    using J = nlohmann::ordered_json;
    J blocks_json = J::array();
    for (const auto& b : blocks) blocks_json.push_back(b.manifest(true));
    if (plugins.empty()) return J{{"blocks", blocks_json}};
    return J{{"plugins", plugins}, {"blocks", blocks_json}};
}

SweepConfig load_sweep_config(const std::string& path) {
    const std::string where = "config '" + path + "'";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw UsageError(where + " does not exist");
    if (std::filesystem::is_directory(path, ec)) throw UsageError(where + " is a directory, not a file");
    std::ifstream in(path);
    if (!in) throw UsageError(where + " cannot be read");
    // A UTF-8 byte-order mark (some Windows editors write one) is not part of the INI text.
    if (in.peek() == 0xEF) {
        char bom[3] = {};
        in.read(bom, 3);
        if (!in || bom[1] != '\xBB' || bom[2] != '\xBF') in.clear(), in.seekg(0);
    }
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
            check_defaults(defaults, where + " [sweep]");
            if (defaults.count("plugins")) {
                config.plugins = split_words(defaults["plugins"]);
                defaults.erase("plugins");
            }
        } else if (name.rfind("block ", 0) == 0 && name.find_first_not_of(' ', 6) != std::string::npos) {
            if (!printable_utf8(name))
                throw UsageError(where + ": a [block NAME] has a NAME that is not printable UTF-8");
            blocks.emplace_back(name.substr(name.find_first_not_of(' ', 6)), &section);
        } else {
            throw UsageError(where + ": unknown section [" + name + "] (accepted: [sweep], [block NAME])");
        }
    }
    if (blocks.empty()) throw UsageError(where + " has no [block NAME] section: nothing to sweep");
    // Plugins first: their backends' names appear in the blocks' memories. A relative path is
    // taken relative to the config file's directory, so a config runs from any directory.
    for (const auto& p : config.plugins) {
        const auto file = std::filesystem::path(path).parent_path() / p;
        try {
            load_plugin(std::filesystem::path(p).is_absolute() ? p : file.lexically_normal().string());
        } catch (const UsageError& e) {
            throw UsageError(where + " [sweep] plugins: " + e.what());
        }
    }
    for (const auto& [name, section] : blocks) {
        const std::string at = where + " [block " + name + "]";
        Values own = section_values(*section, at);
        if (own.count("plugins")) throw UsageError(at + ": key 'plugins' belongs in [sweep] (plugins load for the whole sweep)");
        config.blocks.push_back(make_block(name, defaults, own, at));
    }

    // Count before expanding: a range or seed count too large is refused, not allocated.
    std::int64_t total = 0;
    for (const auto& b : config.blocks) {
        total += b.size(where + " [block " + b.name + "]");
        if (total > kMaxCells)
            throw UsageError(where + " has more than " + std::to_string(kMaxCells) + " cells; split it into several sweeps");
    }

    // A cell listed twice would give duplicate rows: refuse, naming both places. A block that
    // repeats a value is refused by build_grid (as `memcap run` is); two blocks share a cell iff
    // every list of one meets the other's (both start at seed 0), checked without expanding them.
    for (std::size_t j = 0; j < config.blocks.size(); ++j) {
        const GridBlock& b = config.blocks[j];
        const auto keys = dimension_keys(b);
        for (std::size_t a = 0; a < j; ++a) {
            const auto earlier = dimension_keys(config.blocks[a]);
            std::array<std::size_t, 5> at{};
            bool shared = true;
            for (std::size_t dim = 0; dim < keys.size() && shared; ++dim) {
                const std::set<std::string> theirs(earlier[dim].begin(), earlier[dim].end());
                const auto it = std::find_if(keys[dim].begin(), keys[dim].end(),
                                             [&](const std::string& k) { return theirs.count(k) > 0; });
                shared = it != keys[dim].end();
                at[dim] = static_cast<std::size_t>(it - keys[dim].begin());
            }
            if (shared)
                throw UsageError(where + ": cell (" + cell_label(cell_at(b, at)) + ") appears twice, in [block " +
                                 config.blocks[a].name + "] and [block " + b.name + "]");
        }
    }
    return config;
}

}  // namespace memcap
