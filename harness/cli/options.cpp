// memcap/harness/cli/options.cpp — see options.hpp.
#include "harness/cli/options.hpp"

#include "core/error.hpp"
#include "harness/exec/grid.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <omp.h>

#include <filesystem>

namespace memcap::cli {

po::variables_map parse(const po::options_description& desc, const std::vector<std::string>& args,
                        const po::positional_options_description* positional) {
    po::variables_map vm;
    try {
        po::command_line_parser parser(args);
        parser.options(desc).style(po::command_line_style::unix_style ^ po::command_line_style::allow_guessing);
        po::parsed_options parsed = parser.run();
        // Words that are no option's value: the command's positional arguments take
        // theirs (aggregate's input, sweep's config); any other is named as an error
        // (Boost would drop it silently, e.g. the 64 of `--d 32 64`).
        unsigned taken = 0;
        for (auto& o : parsed.options) {
            if (o.position_key < 0) continue;
            if (positional && taken < positional->max_total_count()) {
                o.string_key = positional->name_for_position(taken++);
                continue;
            }
            const std::string word = o.value.empty() ? std::string() : o.value.front();
            throw UsageError("unexpected argument '" + word + "': not the value of any option (see --help)");
        }
        po::store(parsed, vm);
        po::notify(vm);
    } catch (const po::unknown_option& e) {
        std::string accepted;
        for (const auto& o : desc.options())
            if (o->long_name() != "input" && o->long_name() != "config")
                accepted += (accepted.empty() ? "--" : ", --") + o->long_name();
        throw UsageError(std::string(e.what()) + " (accepted: " + accepted + ")");
    } catch (const po::error& e) {
        throw UsageError(e.what());
    }
    return vm;
}
std::vector<std::string> many(const po::variables_map& vm, const std::string& key) {
    return vm.count(key) ? vm[key].as<std::vector<std::string>>() : std::vector<std::string>{};
}

std::int64_t positive(const std::string& text, const std::string& option, std::int64_t max) {
    if (text.find(',') != std::string::npos)
        throw UsageError(option + ": '" + text + "' is not an integer; give several values separated by spaces, e.g. " +
                         option + " 4 8 16");
    const std::int64_t v = parse_int(text, option);
    if (v < 1) throw UsageError(option + ": '" + text + "' must be at least 1");
    if (v > max) throw UsageError(option + ": '" + text + "' exceeds the limit of " + std::to_string(max));
    return v;
}

int threads_option(const po::variables_map& vm) {
    return vm.count("threads") ? static_cast<int>(positive(vm["threads"].as<std::string>(), "--threads", 4096))
                               : omp_get_max_threads();
}

std::string command_line(int argc, char** argv) {
    std::string out = std::filesystem::path(argv[0]).filename().string();
    for (int i = 1; i < argc; ++i) out += " " + std::string(argv[i]);
    return out;
}

namespace {

/// Parses each text with `parse`; when one fails and holds a comma, says to repeat the option.
template <class Parse>
std::vector<Spec> specs(const std::vector<std::string>& texts, Parse parse, const char* option) {
    std::vector<Spec> out;
    for (const auto& t : texts) {
        try {
            out.push_back(parse(t));
        } catch (const UsageError& e) {
            if (t.find(',') == std::string::npos || t.find(':') != std::string::npos) throw;
            throw UsageError(std::string(e.what()) + "; for several, repeat " + option + " (e.g. " + option + " " +
                             t.substr(0, t.find(',')) + " " + option + " " + t.substr(t.find(',') + 1) + ")");
        }
    }
    return out;
}

}  // namespace

std::vector<Spec> memory_specs(const std::vector<std::string>& texts) { return specs(texts, parse_memory_spec, "-m"); }
std::vector<Spec> task_specs(const std::vector<std::string>& texts) { return specs(texts, parse_task_spec, "-t"); }

std::vector<std::optional<std::int64_t>> budgets_option(const std::vector<std::string>& texts) {
    std::vector<std::optional<std::int64_t>> out;
    for (const auto& s : texts) {
        if (s == "natural") {
            out.push_back(std::nullopt);
            continue;
        }
        try {
            if (s.find("..") != std::string::npos)  // a range, as in a sweep config: 256..16384*4
                for (const auto b : parse_int_list(s, "--budget", 4000000000LL)) out.push_back(b);
            else out.push_back(positive(s, "--budget", 4000000000LL));
        } catch (const UsageError& e) {
            throw UsageError(std::string(e.what()) + " (a number of floats, or 'natural' for the backend's natural size)");
        }
    }
    if (out.empty()) out.push_back(std::nullopt);
    return out;
}

}  // namespace memcap::cli
