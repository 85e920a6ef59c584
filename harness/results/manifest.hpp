// memcap/harness/results/manifest.hpp — the JSON manifest written beside every results CSV.
//
// FILE.manifest.json records what the CSV came from and what its bits depend on:
//   tool, version, command   the command line (argv[0] as its file name, so no machine paths)
//   build     fixed when memcap was built: git commit and whether the tree was
//             dirty, build type, target ISA ("native" with the -march it resolved
//             to and the vector extensions enabled, or "portable x86-64"),
//             compiler, and the Eigen, FFTW and Boost versions it was built with
//   machine   where it ran: the CPU model (/proc/cpuinfo) and the cache sizes
//             Eigen blocks its matrix products for (they can change the bits)
//   threads, mpi_ranks   how it ran (the CSV is the same at any count)
//   then `extra` (e.g. config_file), the canonical config (specs with defaults
//   filled in, ranges expanded), the number of cells and the CSV header.
// `sweep --resume` compares config, cells, csv_header, version and build with
// the running sweep: a sweep is finished only by a binary that computes the
// same bits. machine, threads and mpi_ranks are not compared.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace memcap {

/// The compiler that built this binary, e.g. "g++ 12.2.0" or "clang++ 14.0.6".
std::string compiler_description();

/// The manifest's "build" object: commit, dirty, build_type, isa, march, vector_extensions,
/// eigen_simd, compiler, eigen, fftw, boost.
nlohmann::ordered_json build_info();

/// The manifest's "machine" object: cpu (model name, family/model/stepping), eigen_cache_bytes
/// and allocator (allocator_description()).
nlohmann::ordered_json machine_info();

/// The process's malloc: "jemalloc VERSION (its options that decide what it keeps)" when
/// jemalloc answers mallctl (the memcap binary), else "glibc VERSION malloc".
std::string allocator_description();

/// One line for logs and the bench output, e.g. "native (-march=znver3: sse2 ... avx2 fma avx512f)"
/// or "portable x86-64 (-march=x86-64: sse2)".
std::string isa_description();

/// How a run was spread: threads (per rank) and MPI ranks.
struct ManifestRun {
    int threads = 1;
    int mpi_ranks = 1;
};

/// A manifest: tool, version, command, build, machine, threads, mpi_ranks, then `extra`
/// (e.g. config_file), config, cells, csv_header.
nlohmann::ordered_json make_manifest(const std::string& command, const nlohmann::ordered_json& config, std::size_t cells,
                                     const ManifestRun& run,
                                     const nlohmann::ordered_json& extra = nlohmann::ordered_json::object());

/// Writes `manifest` to `path` atomically (committed at once); invalid UTF-8 in it becomes U+FFFD.
void write_manifest(const std::string& path, const nlohmann::ordered_json& manifest);
/// The text write_manifest writes (for writers that commit it later, beside another file).
std::string manifest_text(const nlohmann::ordered_json& manifest);

}  // namespace memcap
