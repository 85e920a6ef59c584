// memcap/harness/cli/options.hpp — what every command's option parsing shares.
//
// Boost.Program_options with no abbreviations; a word that is no option's
// value and not the command's positional argument is an error naming it (Boost
// would drop it); an unknown option lists the accepted ones. Numbers are read
// strictly: the whole word must be an integer in range, and the message names
// the option, the value and, where a user is likely to have meant something
// else, the form that works (lists are space-separated; repeat -m for several
// memories; `natural` budgets).
#pragma once

#include "core/spec.hpp"

#include <boost/program_options.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memcap::cli {

namespace po = boost::program_options;

/// Parses `args` against `desc` (and `positional`); UsageError for any problem.
po::variables_map parse(const po::options_description& desc, const std::vector<std::string>& args,
                        const po::positional_options_description* positional = nullptr);

/// The values of a multi-token option (empty when absent).
std::vector<std::string> many(const po::variables_map& vm, const std::string& key);

/// An integer in [1, max] given for `option`; UsageError naming both otherwise (exec/grid.hpp's parse_positive).
std::int64_t positive(const std::string& text, const std::string& option, std::int64_t max);

/// `--threads` if given, else all cores (OpenMP's default).
int threads_option(const po::variables_map& vm);

/// The command line as recorded in manifests: argv[0] as its file name (no machine paths).
std::string command_line(int argc, char** argv);

}  // namespace memcap::cli
