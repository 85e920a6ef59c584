// memcap/harness/results/manifest.hpp — the JSON manifest written beside every results CSV.
//
// FILE.manifest.json records what the CSV came from: the tool and version, the
// command line (argv[0] as its file name, so no machine paths), the compiler
// that built memcap, the canonical config (specs with defaults filled in,
// ranges expanded), the number of cells and the CSV header. `sweep --resume`
// compares config, cells, csv_header and version with the running sweep.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace memcap {

/// The compiler that built this binary, e.g. "g++ 12.2.0" or "clang++ 14.0.6".
std::string compiler_description();

/// A manifest: tool, version, command, compiler, then `extra` (e.g. config_file), config, cells, csv_header.
nlohmann::ordered_json make_manifest(const std::string& command, const nlohmann::ordered_json& config, std::size_t cells,
                                     const nlohmann::ordered_json& extra = nlohmann::ordered_json::object());

/// Writes `manifest` to `path` atomically (committed at once); invalid UTF-8 in it becomes U+FFFD.
void write_manifest(const std::string& path, const nlohmann::ordered_json& manifest);
/// The text write_manifest writes (for writers that commit it later, beside another file).
std::string manifest_text(const nlohmann::ordered_json& manifest);

}  // namespace memcap
