// memcap/harness/cli/commands.hpp — the `memcap` program as a function.
//
// `memcap_main` is the whole command line (commands.cpp); harness/cli/main.cpp
// only calls it, so another executable (a test that registers an extra
// backend first, say) can run the same program.
#pragma once

namespace memcap::cli {

/// Runs `memcap` with these arguments; returns its exit status (0, 2 bad input, 1 bug, 130/143 interrupted).
int memcap_main(int argc, char** argv);

}  // namespace memcap::cli
