#pragma once
// Paths this build fixed at configure time, compiled into one small translation unit
// (harness/build_paths.cpp) and read from there: were they compile definitions of the sources
// that use them, each checkout's objects would differ, and a compiler cache could not share a
// build of the same commit between two clones (cmake/unity.cmake).

namespace memcap {

/// The source tree the binary was built from ("" when built without one).
const char* build_source_dir();
/// The MPI module's file name and where the build put it ("" in a build without MPI).
const char* build_mpi_module_name();
const char* build_mpi_module_path();

}  // namespace memcap
