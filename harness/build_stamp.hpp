#pragma once
// What this build fixed at configure and build time -- the source tree's and the MPI module's
// paths, the commit and build type -- compiled into one small translation unit
// (harness/build_stamp.cpp) and read from there. Were they compile definitions or a generated
// header of the sources that use them, each checkout's and each commit's objects would differ:
// a compiler cache could not share a build of the same commit between two clones, and every
// commit would recompile the unity batch that holds the manifest (cmake/unity.cmake).

namespace memcap {

/// The source tree the binary was built from ("" when built without one).
const char* build_source_dir();
/// The MPI module's file name and where the build put it ("" in a build without MPI).
const char* build_mpi_module_name();
const char* build_mpi_module_path();

/// cmake/build_info.cmake's facts: the commit ("unknown" outside git), whether the tree had
/// uncommitted changes (1), none (0) or could not tell (-1), the build type, and the ISA
/// and -march the build targets.
const char* build_git_commit();
int build_git_dirty();
const char* build_type();
const char* build_target_isa();
const char* build_target_march();

}  // namespace memcap
