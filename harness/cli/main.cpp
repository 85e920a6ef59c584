// memcap/harness/cli/main.cpp — the `memcap` binary (see commands.cpp for the commands).
#include "harness/cli/commands.hpp"

int main(int argc, char** argv) { return memcap::cli::memcap_main(argc, argv); }
