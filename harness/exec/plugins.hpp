// memcap/harness/exec/plugins.hpp — loading backends built outside this tree (plugins).
//
// A plugin is a shared library built against an installed memcap (cmake:
// find_package(memcap), target memcap::plugin; examples/out_of_tree_backend/).
// It defines one C function, the registration function
//
//     extern "C" void memcap_register_plugin();
//
// which calls memcap::register_memory for each backend it holds (the macro
// MEMCAP_PLUGIN in memories/plugin.hpp declares it). The plugin links against
// no memcap library: its calls to register_memory, Spec, real_param, ... bind
// to the program that loads it (the `memcap` executable exports its symbols;
// so does the Python module), so there is one registry, the host's. A loaded
// backend is then listed, parsed, run, swept and conformance-tested like the
// built-in ones.
//
// `memcap run|sweep|list --plugin PATH.so` and a sweep config's `plugins =`
// key load plugins before any spec string is read.
#pragma once

#include <string>
#include <vector>

namespace memcap {

/// Loads the plugin at `path` (dlopen) and calls its registration function. A
/// file already loaded (the same file by any path) is not loaded again. A path
/// without '/' is taken relative to the working directory (never searched for
/// on the library path). UsageError, one line naming the file: it cannot be
/// loaded (dlerror's reason), it lacks memcap_register_plugin, it was built
/// against another memcap version or for another vector ISA (Eigen's alignment,
/// memories/plugin_abi.hpp), or a backend it registers is refused
/// (register_memory: e.g. a name already taken).
void load_plugin(const std::string& path);

/// load_plugin for each path, in order.
void load_plugins(const std::vector<std::string>& paths);

/// The plugins loaded so far, as given, in load order.
std::vector<std::string> loaded_plugins();

}  // namespace memcap
