# Unity batches that a compiler cache can share between checkouts.
#
# CMake's own unity build (CMAKE_UNITY_BUILD) writes `#include "/abs/path/to/file.cpp"` into each
# batch, so the preprocessed text of every batch names the checkout it was built in, and ccache
# (whose base directory makes the command line's paths relative, not a file's contents) cannot
# hand one clone's objects to another: a fresh clone of the same commit compiled everything again.
# memcap_unity() writes the batches itself, each source included by its path under the source
# root (`#include "core/spec.cpp"`, found through the library's -I of the source root), so two
# checkouts of the same commit preprocess to the same text and the second builds from the cache.
#
# memcap_unity(target SIZE n): CMake's batches, the target's sources in order, n to a file (0: all
# in one). memcap_unity(target COUNT k): k batches of the sources in order, as equal in number as
# can be (the library's two: 135 s and 107 s of compiling, in parallel on two cores; dealing the
# sources to them in turn gave 148 s and 96 s, and file sizes are no guide to the cost).
# Either leaves alone a source with SKIP_UNITY_BUILD_INCLUSION or its own COMPILE_DEFINITIONS (as
# CMake does), and a source with COMPILE_OPTIONS of its own that no other source shares; sources
# that share the same own options (two or more) compile together as one batch of their own with
# those options (`${target}_apart_<i>.cpp`). A target with one source to batch is left as it is.
# Call it in the directory that defines the target, after its per-source properties are set.
function(memcap_unity target mode amount)
  if(NOT MEMCAP_UNITY_BUILD)
    return()
  endif()
  if(NOT mode MATCHES "^(SIZE|COUNT)$" OR NOT amount MATCHES "^[0-9]+$")
    message(FATAL_ERROR "memcap_unity(${target} ${mode} ${amount}): expected SIZE n or COUNT k, n and k whole numbers")
  endif()
  get_target_property(sources ${target} SOURCES)
  set(batchable "")
  set(option_sets "")  # each distinct COMPILE_OPTIONS of sources with options of their own, as a hash
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.(cpp|cc|cxx)$")
      continue()
    endif()
    get_source_file_property(skip ${source} SKIP_UNITY_BUILD_INCLUSION)
    get_source_file_property(options ${source} COMPILE_OPTIONS)
    get_source_file_property(definitions ${source} COMPILE_DEFINITIONS)
    if(options AND NOT skip AND NOT definitions)
      string(SHA1 key "${options}")
      if(NOT key IN_LIST option_sets)
        list(APPEND option_sets ${key})
        set(options_${key} "${options}")
        set(sources_${key} "")
      endif()
      list(APPEND sources_${key} ${source})
    endif()
    if(skip OR options OR definitions)
      continue()
    endif()
    list(APPEND batchable ${source})
  endforeach()
  # Sources that share the same options of their own (two or more) compile as one more batch with
  # those options (the sanitizer build's parsers with libFuzzer's coverage: the top-level CMakeLists.txt).
  set(apart 0)
  foreach(key IN LISTS option_sets)
    list(LENGTH sources_${key} n)
    if(n LESS 2)
      continue()
    endif()
    set(text "")
    foreach(source IN LISTS sources_${key})
      _memcap_unity_include(${source} text)
    endforeach()
    _memcap_unity_write(${target} ${CMAKE_CURRENT_BINARY_DIR}/memcap_unity apart_${apart} "${text}")
    set_source_files_properties(${CMAKE_CURRENT_BINARY_DIR}/memcap_unity/${target}_apart_${apart}.cpp
                                PROPERTIES COMPILE_OPTIONS "${options_${key}}")
    math(EXPR apart "${apart} + 1")
  endforeach()
  list(LENGTH batchable count)
  if(count LESS 2)
    return()
  endif()
  # size: sources a batch; each source's batch is its position / size
  if(mode STREQUAL "SIZE")
    set(size ${amount})
  elseif(amount EQUAL 0)
    set(size 0)
  else()
    math(EXPR size "(${count} + ${amount} - 1) / ${amount}")
  endif()
  if(size EQUAL 0 OR size GREATER count)
    set(size ${count})
  endif()
  math(EXPR batches "(${count} + ${size} - 1) / ${size}")
  math(EXPR last "${batches} - 1")
  foreach(b RANGE ${last})
    set(text_${b} "")
  endforeach()
  set(position 0)
  foreach(source IN LISTS batchable)
    math(EXPR b "${position} / ${size}")
    _memcap_unity_include(${source} text_${b})
    math(EXPR position "${position} + 1")
  endforeach()
  foreach(b RANGE ${last})
    _memcap_unity_write(${target} ${CMAKE_CURRENT_BINARY_DIR}/memcap_unity ${b} "${text_${b}}")
  endforeach()
  set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
endfunction()

# Appends `#include "<source's path under the source root>"` to the variable `text_var` of the
# caller and takes the source out of the target's own compilations (the batch compiles it).
function(_memcap_unity_include source text_var)
  get_filename_component(path ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  file(RELATIVE_PATH relative ${PROJECT_SOURCE_DIR} ${path})
  set(${text_var} "${${text_var}}#include \"${relative}\"\n" PARENT_SCOPE)
  set_source_files_properties(${source} PROPERTIES HEADER_FILE_ONLY ON)
endfunction()

function(_memcap_unity_write target dir index text)
  set(file ${dir}/${target}_${index}.cpp)
  set(text "// Generated by cmake/unity.cmake: one unity batch of ${target}; do not edit.\n${text}")
  set(old "")
  if(EXISTS ${file})
    file(READ ${file} old)
  endif()
  if(NOT old STREQUAL text)  # rewritten only when it changes, so a reconfigure recompiles nothing
    file(WRITE ${file} "${text}")
  endif()
  target_sources(${target} PRIVATE ${file})
endfunction()
