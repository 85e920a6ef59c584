// Plugins in the test binary: MEMCAP_TEST_PLUGINS (paths separated by ':') are loaded
// at the start of every run, before any test, so that every test iterating over the
// registry (the conformance tests first) covers their backends exactly as it covers
// the built-in ones. tests/plugin_example.sh runs the conformance tests so on the
// example plugin built against the installed package (examples/out_of_tree_backend).
// The binary exports its symbols (ENABLE_EXPORTS) so a plugin binds to its registry.
#ifndef CATCH_CONFIG_EXTERNAL_INTERFACES  // (the target defines it: tests/CMakeLists.txt)
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#endif
#include "support.hpp"

#include "core/error.hpp"
#include "harness/exec/plugins.hpp"
#include "memories/registry.hpp"

#include <cstdlib>
#include <iostream>
#include <sstream>

using namespace memcap;

namespace {

struct LoadTestPlugins : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;
    void testRunStarting(Catch::TestRunInfo const& info) override {
        if (const char* list = std::getenv("MEMCAP_TEST_PLUGINS")) {
            std::istringstream in(list);
            for (std::string path; std::getline(in, path, ':');)
                if (!path.empty()) {
                    try {
                        load_plugin(path);
                    } catch (const UsageError& e) {
                        std::cerr << "MEMCAP_TEST_PLUGINS: " << e.what() << "\n";
                        std::exit(2);
                    }
                }
            std::string names;
            for (const auto& n : memory_names()) names += (names.empty() ? "" : ", ") + n;
            std::cerr << "MEMCAP_TEST_PLUGINS: loaded; backends: " << names << "\n";
        }
        TestEventListenerBase::testRunStarting(info);
    }
};

}  // namespace

CATCH_REGISTER_LISTENER(LoadTestPlugins)

TEST_CASE("a plugin that cannot be loaded is refused in one line naming the file", "[plugins]") {
    REQUIRE_THROWS_WITH(load_plugin("no/such/plugin.so"), Catch::Contains("plugin 'no/such/plugin.so': no such file"));
    REQUIRE_THROWS_WITH(load_plugin("."), Catch::Contains("is a directory"));
    REQUIRE_THROWS_WITH(load_plugin(MEMCAP_BINARY), Catch::Contains("cannot load"));  // an executable, not a library
    REQUIRE_THROWS_WITH(load_plugin(""), Catch::Contains("empty path"));
}
