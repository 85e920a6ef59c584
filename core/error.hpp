// memcap/core/error.hpp — the one error type for bad input.
//
// A UsageError carries a one-line message naming the bad option or value. The
// `memcap` binary prints it as `memcap: error: <message>` and exits with status 2;
// library code throws it wherever user input (spec strings, sizes, budgets,
// paths) is rejected. Anything else that escapes is a bug (exit status 1).
#pragma once

#include <stdexcept>
#include <string>

namespace memcap {

struct UsageError : std::runtime_error {
    explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace memcap
