// memcap/tests/fuzz/fuzz_sweep_config.cpp — libFuzzer harness for sweep configs.
//
// Writes each input to one file in a private temporary directory (removed at
// exit; nothing is written anywhere else) and loads it with load_sweep_config,
// and feeds it to parse_int_list. Bad input may only ever be a UsageError; any
// other exception, a sanitizer report, or a broken invariant aborts:
//   - a config that loads has at most kMaxCells cells, and no cell twice (for
//     grids small enough, checked against the expanded list of cells);
//   - its canonical JSON can be printed;
//   - parse_int_list returns only values in [1, max].
// Run by scripts/fuzz.sh; seeds in tests/fuzz/corpus/sweep_config/.
#include "core/error.hpp"
#include "harness/exec/runner.hpp"
#include "harness/exec/sweep_config.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include <unistd.h>

using namespace memcap;

namespace {

[[noreturn]] void broken(const std::string& what) {
    std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
    std::abort();
}

std::string g_dir;

void remove_dir() {
    std::error_code ec;
    if (!g_dir.empty()) std::filesystem::remove_all(g_dir, ec);
}

const std::string& config_path() {
    static const std::string path = [] {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/memcap-fuzz-XXXXXX";
        if (!::mkdtemp(pattern.data())) broken("cannot create a temporary directory");
        g_dir = pattern;
        std::atexit(remove_dir);
        return g_dir + "/fuzz.ini";
    }();
    return path;
}

std::string key(const CellSpec& c) { return cell_label(c); }  // readout resolved: `auto` and what it becomes are one cell

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);

    const std::string& path = config_path();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) broken("cannot write " + path);
    if (std::fwrite(input.data(), 1, input.size(), f) != input.size() || std::fclose(f) != 0) broken("write failed");
    try {
        const SweepConfig config = load_sweep_config(path);
        double cells_d = 0;  // in floating point: an unchecked product may exceed 64 bits
        for (const auto& b : config.blocks)
            cells_d += static_cast<double>(b.seeds) * static_cast<double>(b.readouts.size()) *
                       static_cast<double>(b.ds.size()) * static_cast<double>(b.tasks.size()) *
                       static_cast<double>(b.memories.size()) * static_cast<double>(b.budgets.size()) *
                       static_cast<double>(b.ns.size());
        if (cells_d < 1 || cells_d > static_cast<double>(kMaxCells))
            broken("config loaded with " + std::to_string(cells_d) + " cells");
        const auto total = static_cast<std::int64_t>(cells_d);
        if (total <= 20000) {
            const auto cells = config.cells();
            if (static_cast<std::int64_t>(cells.size()) != total) broken("cells() disagrees with the block sizes");
            std::set<std::string> seen;
            for (const auto& c : cells)
                if (!seen.insert(key(c)).second) broken("a duplicate cell was accepted: " + key(c));
        }
        (void)config.canonical().dump();
    } catch (const UsageError&) {
    }

    try {
        for (const auto x : parse_int_list(input, "n", 100000000))
            if (x < 1 || x > 100000000) broken("parse_int_list gave " + std::to_string(x));
    } catch (const UsageError&) {
    }
    return 0;
}
