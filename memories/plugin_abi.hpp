// memcap/memories/plugin_abi.hpp — what a plugin and the memcap loading it must agree on.
//
// A plugin (memories/plugin.hpp) and its host share C++ types — MemoryEntry,
// Spec, Eigen matrices passed by reference — so both must come from the same
// memcap version, and Eigen must lay out and align memory the same way on both
// sides: EIGEN_MAX_ALIGN_BYTES follows the vector ISA (16 for SSE2, 32 for AVX,
// 64 for AVX-512), so a plugin compiled for another -march than its host could
// free the host's matrices with the wrong allocator. The plugin reports this
// string (memcap_plugin_version) and the loader refuses a mismatch.
#pragma once

#include <Eigen/Core>

#ifndef MEMCAP_VERSION
#define MEMCAP_VERSION "0.0.0"
#endif

#define MEMCAP_PLUGIN_ABI_STR2(x) #x
#define MEMCAP_PLUGIN_ABI_STR(x) MEMCAP_PLUGIN_ABI_STR2(x)
/// "0.3.0 (Eigen alignment 32 bytes)"
#define MEMCAP_PLUGIN_ABI MEMCAP_VERSION " (Eigen alignment " MEMCAP_PLUGIN_ABI_STR(EIGEN_MAX_ALIGN_BYTES) " bytes)"
