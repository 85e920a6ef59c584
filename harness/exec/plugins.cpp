// memcap/harness/exec/plugins.cpp — see plugins.hpp.
#include "harness/exec/plugins.hpp"

#include "core/error.hpp"
#include "memories/plugin_abi.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <set>

namespace memcap {
namespace {

std::mutex g_mutex;
std::set<std::string> g_files;         // canonical paths of the plugins loaded
std::vector<std::string> g_loaded;     // as given, in load order

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

}  // namespace

void load_plugin(const std::string& path) {
    const std::string where = "plugin '" + path + "'";
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.empty()) throw UsageError("--plugin: empty path");
    if (!fs::exists(path, ec)) throw UsageError(where + ": no such file");
    if (fs::is_directory(path, ec)) throw UsageError(where + " is a directory, not a shared library");
    const std::string file = fs::canonical(path, ec).string();
    if (ec) throw UsageError(where + ": " + ec.message());

    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_files.count(file)) return;
    // The canonical path holds a '/', so dlopen never searches the library path for it.
    // RTLD_NOW: a symbol the host does not provide is a load error here, not a crash later.
    // The handle is never closed: the registered backends' code lives in the library.
    void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        throw UsageError(where + ": cannot load: " + one_line(why ? why : "unknown reason"));
    }
    using Version = const char* (*)();
    if (auto version = reinterpret_cast<Version>(dlsym(handle, "memcap_plugin_version"))) {
        const std::string built = version() ? version() : "";
        if (built != MEMCAP_PLUGIN_ABI)
            throw UsageError(where + " was built for memcap " + built + ", this is memcap " MEMCAP_PLUGIN_ABI +
                             "; rebuild it against this installation (memcap::plugin sets the same -march)");
    }
    using Register = void (*)();
    auto reg = reinterpret_cast<Register>(dlsym(handle, "memcap_register_plugin"));
    if (!reg)
        throw UsageError(where + " has no registration function (extern \"C\" void memcap_register_plugin(); "
                         "see memories/plugin.hpp)");
    g_files.insert(file);  // registered once, even if registration fails part way
    g_loaded.push_back(path);
    try {
        reg();
    } catch (const UsageError& e) {
        throw UsageError(where + ": " + one_line(e.what()));
    } catch (const std::exception& e) {
        throw UsageError(where + ": registration failed: " + one_line(e.what()));
    }
}

void load_plugins(const std::vector<std::string>& paths) {
    for (const auto& p : paths) load_plugin(p);
}

std::vector<std::string> loaded_plugins() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_loaded;
}

}  // namespace memcap
