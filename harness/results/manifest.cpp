// memcap/harness/results/manifest.cpp — see manifest.hpp.
#include "harness/results/manifest.hpp"

#include "harness/results/atomic_file.hpp"
#include "harness/results/csv.hpp"

#ifndef MEMCAP_VERSION
#define MEMCAP_VERSION "0.0.0"
#endif

namespace memcap {

std::string compiler_description() {
#if defined(__clang__)
    return std::string("clang++ ") + __clang_version__;
#elif defined(__GNUC__)
    return std::string("g++ ") + __VERSION__;
#else
    return "unknown compiler";
#endif
}

nlohmann::ordered_json make_manifest(const std::string& command, const nlohmann::ordered_json& config, std::size_t cells,
                                     const nlohmann::ordered_json& extra) {
    nlohmann::ordered_json m;
    m["tool"] = "memcap";
    m["version"] = MEMCAP_VERSION;
    m["command"] = command;
    m["compiler"] = compiler_description();
    for (const auto& [key, value] : extra.items()) m[key] = value;
    m["config"] = config;
    m["cells"] = cells;
    const std::string& header = cell_header();
    m["csv_header"] = header.substr(0, header.size() - 1);
    return m;
}

std::string manifest_text(const nlohmann::ordered_json& manifest) {
    // paths and the command line may hold any bytes: invalid UTF-8 is written as U+FFFD
    return manifest.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void write_manifest(const std::string& path, const nlohmann::ordered_json& manifest) {
    AtomicFile file(path);
    file.write(manifest_text(manifest));
    file.commit();
}

}  // namespace memcap
