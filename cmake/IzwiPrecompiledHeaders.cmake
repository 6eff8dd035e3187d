# Precompiled headers. libtorch's ATen/ATen.h takes about 11 s to parse on the project's 2-core
# machines, most of a typical source's compile time, and most engine and test sources include it
# (directly or through their headers). A group of targets parses it once into a precompiled header
# that their sources load in about 2 s instead; a source without ATen pays those 2 s. The examples
# and benchmarks are one source each, most without ATen: they gain nothing from one.
option(IZWI_PRECOMPILED_HEADERS "Parse libtorch's headers once per group of targets (faster builds)" ON)

# Headers every engine-side target precompiles; the test binaries add GoogleTest's.
set(IZWI_PRECOMPILED_ENGINE_HEADERS <ATen/ATen.h> <nlohmann/json.hpp>)
set(IZWI_PRECOMPILED_TEST_HEADERS ${IZWI_PRECOMPILED_ENGINE_HEADERS} <gtest/gtest.h>)

# izwi_precompile_headers(TARGETS <target>... HEADERS <header>...): the first target precompiles the
# headers, the others reuse its precompiled header. izwi_precompile_headers(TARGETS <target>...
# REUSE_FROM <other>): they all reuse another group's. Targets that share one need the same compile
# flags: GCC ignores (with a -Winvalid-pch warning) a precompiled header built with others.
function(izwi_precompile_headers)
  if(NOT IZWI_PRECOMPILED_HEADERS)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "REUSE_FROM" "TARGETS;HEADERS")
  set(owner ${arg_REUSE_FROM})
  if(NOT owner)
    list(POP_FRONT arg_TARGETS owner)
    target_precompile_headers(${owner} PRIVATE ${arg_HEADERS})
  endif()
  foreach(target ${arg_TARGETS})
    target_precompile_headers(${target} REUSE_FROM ${owner})
  endforeach()
endfunction()
