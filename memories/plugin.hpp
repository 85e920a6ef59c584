// memcap/memories/plugin.hpp — what a plugin (a backend built outside this tree) includes.
//
// A plugin is a shared library that defines its registration function with
// MEMCAP_PLUGIN and registers its backends there:
//
//     #include <memcap/memories/plugin.hpp>   // or "memories/plugin.hpp" in-tree
//
//     MEMCAP_PLUGIN {
//         memcap::register_memory(my_entry());   // a complete MemoryEntry
//     }
//
// Build it against the installed package (find_package(memcap), link
// memcap::plugin — headers and definitions only, no library: the plugin's
// calls bind to the host's one registry) and load it with
// `memcap run --plugin PATH.so`, a sweep config's `plugins =` key, or
// memcap.load_plugin(PATH) in Python. See harness/exec/plugins.hpp for what
// the loader checks, and examples/out_of_tree_backend/ for a complete plugin.
#pragma once

#ifndef MEMCAP_VERSION
#error "MEMCAP_VERSION is not defined: link the plugin against memcap::plugin (find_package(memcap))"
#endif

#include "memories/plugin_abi.hpp"
#include "memories/registry.hpp"

/// The memcap version the plugin was compiled against and its Eigen alignment
/// (plugin_abi.hpp); the loader refuses a plugin whose string differs from its own.
extern "C" __attribute__((visibility("default"), used)) inline const char* memcap_plugin_version() {
    return MEMCAP_PLUGIN_ABI;
}

/// Declares and opens the definition of the plugin's registration function.
#define MEMCAP_PLUGIN extern "C" __attribute__((visibility("default"))) void memcap_register_plugin()
