#include "harness/build_paths.hpp"

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

}  // namespace memcap
