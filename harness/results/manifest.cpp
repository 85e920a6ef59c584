// memcap/harness/results/manifest.cpp — see manifest.hpp.
#include "harness/results/manifest.hpp"

#include "harness/results/atomic_file.hpp"
#include "harness/results/csv.hpp"
#include "memories/registry.hpp"

#include "harness/build_stamp.hpp"  // the commit, build type and ISA (cmake/build_info.cmake)

#include <Eigen/Core>
#include <boost/version.hpp>
#include <fftw3.h>

#include <dlfcn.h>
#include <sys/types.h>  // ssize_t
#if __has_include(<gnu/libc-version.h>)
#include <gnu/libc-version.h>
#endif

#include <cstddef>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

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

namespace {

/// The x86 vector extensions this translation unit (and so the whole build: one set of flags) was compiled for.
std::string vector_extensions() {
    std::string s;
    auto add = [&](bool on, const char* name) {
        if (on) s += (s.empty() ? "" : " ") + std::string(name);
    };
#if defined(__SSE2__)
    add(true, "sse2");
#endif
#if defined(__SSE3__)
    add(true, "sse3");
#endif
#if defined(__SSSE3__)
    add(true, "ssse3");
#endif
#if defined(__SSE4_1__)
    add(true, "sse4.1");
#endif
#if defined(__SSE4_2__)
    add(true, "sse4.2");
#endif
#if defined(__AVX__)
    add(true, "avx");
#endif
#if defined(__AVX2__)
    add(true, "avx2");
#endif
#if defined(__FMA__)
    add(true, "fma");
#endif
#if defined(__AVX512F__)
    add(true, "avx512f");
#endif
#if defined(__AVX512DQ__)
    add(true, "avx512dq");
#endif
#if defined(__AVX512BW__)
    add(true, "avx512bw");
#endif
#if defined(__AVX512VL__)
    add(true, "avx512vl");
#endif
    return s.empty() ? "none" : s;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

/// "model name (family F model M stepping S)" from the first processor in /proc/cpuinfo; "unknown" elsewhere.
std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::map<std::string, std::string> first;
    for (std::string line; std::getline(in, line) && !line.empty();) {
        const auto colon = line.find(':');
        if (colon != std::string::npos) first.emplace(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
    }
    std::string model = first.count("model name") ? first["model name"] : "unknown";
    if (first.count("cpu family") && first.count("model") && first.count("stepping"))
        model += " (family " + first["cpu family"] + " model " + first["model"] + " stepping " + first["stepping"] + ")";
    return model;
}

}  // namespace

nlohmann::ordered_json build_info() {
    nlohmann::ordered_json b;
    b["commit"] = build_git_commit();
    b["dirty"] = build_git_dirty() < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(build_git_dirty() == 1);
    b["build_type"] = build_type();
    b["isa"] = build_target_isa();
    b["march"] = build_target_march();
    b["vector_extensions"] = vector_extensions();
    b["eigen_simd"] = Eigen::SimdInstructionSetsInUse();
    b["compiler"] = compiler_description();
    b["eigen"] = std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                 std::to_string(EIGEN_MINOR_VERSION);
    b["fftw"] = std::string(fftwf_version);  // also names the SIMD codelets the library has (chosen at run time)
    b["boost"] = std::to_string(BOOST_VERSION / 100000) + "." + std::to_string(BOOST_VERSION / 100 % 1000) + "." +
                 std::to_string(BOOST_VERSION % 100);
    return b;
}

std::string allocator_description() {
    // jemalloc, when the process allocates with it (the memcap binary; harness/cli/allocator.hpp),
    // answers mallctl: its version and the options that decide what it keeps. Only when the
    // library that holds mallctl is also the one malloc resolves to (a plugin could load
    // jemalloc beside glibc's malloc without replacing it).
    using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
    const auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
    const void* malloc_symbol = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info of_mallctl{}, of_malloc{};
    if (mallctl && malloc_symbol && dladdr(reinterpret_cast<void*>(mallctl), &of_mallctl) &&
        dladdr(malloc_symbol, &of_malloc) && of_mallctl.dli_fbase == of_malloc.dli_fbase) {
        const char* version = nullptr;
        std::size_t size = sizeof version;
        if (mallctl("version", &version, &size, nullptr, 0) != 0 || !version) return "jemalloc";
        bool read = true;
        const auto option = [&](const char* name, auto value) {  // "name:value" of opt.name, as MALLOC_CONF writes it
            std::size_t bytes = sizeof value;
            read = read && mallctl((std::string("opt.") + name).c_str(), &value, &bytes, nullptr, 0) == 0;
            return std::string(name) + ":" + std::to_string(value);
        };
        const std::string options = option("narenas", 0u) + "," + option("oversize_threshold", std::size_t{0}) + "," +
                                    option("dirty_decay_ms", ssize_t{0}) + "," + option("muzzy_decay_ms", ssize_t{0});
        std::string s = std::string("jemalloc ") + version;
        if (read) s += " (" + options + ")";
        return s;
    }
#if __has_include(<gnu/libc-version.h>)
    return std::string("glibc ") + gnu_get_libc_version() + " malloc";
#else
    return "the C library's malloc";
#endif
}

nlohmann::ordered_json machine_info() {
    nlohmann::ordered_json m;
    m["cpu"] = cpu_model();
    m["eigen_cache_bytes"] = {{"l1", Eigen::l1CacheSize()}, {"l2", Eigen::l2CacheSize()}, {"l3", Eigen::l3CacheSize()}};
    m["allocator"] = allocator_description();  // where blocks come from: speed and memory, never bits
    return m;
}

std::string isa_description() {
    return std::string(build_target_isa()) + " (-march=" + build_target_march() + ": " + vector_extensions() + ")";
}

/// What `best` may choose from, for a report to tell whether a choice sits at an end of
/// its candidates: every memory parameter that declares candidates, and the default widths.
namespace {

/// Every backend name a config mentions: the name before ':' of each word of its string values
/// (a memory spec, or a sweep block's space-separated list of them).
void memory_names_in(const nlohmann::ordered_json& j, std::set<std::string>& out) {
    if (j.is_string()) {
        std::istringstream words(j.get<std::string>());
        for (std::string w; words >> w;) out.insert(w.substr(0, w.find(':')));
    } else if (j.is_structured()) {
        for (const auto& v : j) memory_names_in(v, out);
    }
}

}  // namespace

nlohmann::ordered_json race_candidates(const nlohmann::ordered_json& config) {
    std::set<std::string> named;
    memory_names_in(config, named);
    nlohmann::ordered_json r, memories = nlohmann::ordered_json::object();
    for (const auto& entry : memory_registry())
        if (named.count(entry.name))  // the run's memories only
            for (const auto& p : entry.params)
                if (!p.best.empty()) memories[entry.name][p.key] = p.best;
    r["memories"] = memories;
    r["widths"] = "d = best: powers of two from 2 up to the budget, each the memory can be built with there "
                  "and whose cell fits the candidates' memory cap; d = best:LIST: the list";
    return r;
}

nlohmann::ordered_json make_manifest(const std::string& command, const nlohmann::ordered_json& config, std::size_t cells,
                                     const ManifestRun& run, const nlohmann::ordered_json& extra) {
    nlohmann::ordered_json m;
    m["tool"] = "memcap";
    m["version"] = MEMCAP_VERSION;
    m["command"] = command;
    m["build"] = build_info();
    m["machine"] = machine_info();
    m["threads"] = run.threads;
    m["mpi_ranks"] = run.mpi_ranks;
    for (const auto& [key, value] : extra.items()) m[key] = value;
    m["config"] = config;
    m["race_candidates"] = race_candidates(config);
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
