// memcap/harness/cli/options.cpp — see options.hpp.
#include "harness/cli/options.hpp"

#include "core/error.hpp"
#include "harness/exec/grid.hpp"

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
        const std::string* previous = nullptr;  // the option the word follows, if any
        for (auto& o : parsed.options) {
            if (o.position_key < 0) {
                previous = &o.string_key;
                continue;
            }
            if (positional && taken < positional->max_total_count()) {
                o.string_key = positional->name_for_position(taken++);
                previous = nullptr;
                continue;
            }
            const std::string word = o.value.empty() ? std::string() : o.value.front();
            if (previous && !previous->empty()) {
                const auto* d = desc.find_nothrow(*previous, false);
                const unsigned most = d ? d->semantic()->max_tokens() : 1;
                if (most <= 1)
                    throw UsageError("unexpected argument '" + word + "': --" + *previous + " takes " +
                                     (most == 0 ? "no value" : "one value") + " (see --help)");
            }
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
    return parse_positive(text, option, max);
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

}  // namespace memcap::cli
