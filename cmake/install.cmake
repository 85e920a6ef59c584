# memcap/cmake/install.cmake — `cmake --install`: the package other CMake projects find.
#
#   <prefix>/bin/memcap                          the command line (exports its symbols: plugins bind to it)
#   <prefix>/lib/libmemcap_lib.a                 the library
#   <prefix>/include/memcap/{core,memories,tasks,harness}/...   headers, as in the source tree
#       (both <prefix>/include and <prefix>/include/memcap are on the targets' include path:
#       `#include <memcap/memories/plugin.hpp>` outside, and the headers' own "core/spec.hpp")
#   <prefix>/lib/cmake/memcap/memcapConfig.cmake, memcapTargets.cmake, memcapConfigVersion.cmake
#
# Targets (find_package(memcap)):
#   memcap::memcap   the static library with its usage requirements (link it into a program)
#   memcap::plugin   headers and definitions only: a plugin (a shared library loaded with
#                    --plugin) links this, never the library, so that its calls bind to the
#                    host's one registry (harness/exec/plugins.hpp)
#   memcap::cli      the memcap executable
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(memcap_lib PROPERTIES EXPORT_NAME memcap)
set_target_properties(memcap PROPERTIES EXPORT_NAME cli)

add_library(memcap_plugin INTERFACE)
add_library(memcap::plugin ALIAS memcap_plugin)
set_target_properties(memcap_plugin PROPERTIES EXPORT_NAME plugin)
target_include_directories(memcap_plugin INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                                   $<INSTALL_INTERFACE:include/memcap> $<INSTALL_INTERFACE:include>)
target_include_directories(memcap_plugin SYSTEM INTERFACE ${RANDOM123_INCLUDE_DIR})
target_compile_definitions(memcap_plugin INTERFACE EIGEN_DONT_PARALLELIZE MEMCAP_VERSION="${PROJECT_VERSION}")
target_compile_features(memcap_plugin INTERFACE cxx_std_17)
# Results are bit-reproducible only without contraction (see CMakeLists.txt), and a plugin
# shares Eigen matrices with its host, so it is compiled for the host's ISA (Eigen's
# alignment follows it; the loader refuses a mismatch, memories/plugin_abi.hpp).
target_compile_options(memcap_plugin INTERFACE -ffp-contract=off)
# (-march=native, not the CPU name MEMCAP_MARCH: g++ may name a CPU whose -march= enables
# fewer extensions than native does; a plugin built on another machine may be refused.)
if(MEMCAP_PORTABLE)
  target_compile_options(memcap_plugin INTERFACE -march=x86-64 -mtune=generic)
else()
  target_compile_options(memcap_plugin INTERFACE -march=native)
endif()
target_link_libraries(memcap_plugin INTERFACE Eigen3::Eigen Boost::headers)

install(TARGETS memcap_lib memcap memcap_plugin EXPORT memcapTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(dir IN ITEMS core memories tasks harness)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/memcap/${dir}
          FILES_MATCHING PATTERN "*.hpp")
endforeach()

set(memcap_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/memcap)
install(EXPORT memcapTargets NAMESPACE memcap:: DESTINATION ${memcap_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/memcapConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/memcapConfig.cmake INSTALL_DESTINATION ${memcap_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/memcapConfigVersion.cmake COMPATIBILITY ExactVersion)
install(FILES ${PROJECT_BINARY_DIR}/memcapConfig.cmake ${PROJECT_BINARY_DIR}/memcapConfigVersion.cmake
        DESTINATION ${memcap_cmake_dir})
