#include "harness/build_stamp.hpp"

#include "memcap_build_info.hpp"  // generated into the build tree by cmake/build_info.cmake

// Set by CMakeLists.txt on this file only.
#ifndef MEMCAP_SOURCE_DIR
#define MEMCAP_SOURCE_DIR ""
#endif
#ifndef MEMCAP_MPI_MODULE_NAME
#define MEMCAP_MPI_MODULE_NAME ""
#define MEMCAP_MPI_MODULE_PATH ""
#endif

namespace memcap {

const char* build_source_dir() { return MEMCAP_SOURCE_DIR; }
const char* build_mpi_module_name() { return MEMCAP_MPI_MODULE_NAME; }
const char* build_mpi_module_path() { return MEMCAP_MPI_MODULE_PATH; }

const char* build_git_commit() { return MEMCAP_GIT_COMMIT; }
int build_git_dirty() { return MEMCAP_GIT_DIRTY; }
const char* build_type() { return MEMCAP_BUILD_TYPE; }
const char* build_target_isa() { return MEMCAP_TARGET_ISA; }
const char* build_target_march() { return MEMCAP_TARGET_MARCH; }

}  // namespace memcap
