# The C++ standard the project compiles in: C++17, or C++20 where the libtorch found requires it.
# libtorch 2.14 and later refuse older standards in their headers ("C++20 or later compatible
# compiler is required to use ATen"), and the CUDA wheels a GPU user installs move with them. The
# public headers (include/izwi) do not include libtorch, so a program using izwi stays on C++17.
set(IZWI_CXX_STANDARD 17)
foreach(_izwi_dir ${TORCH_INCLUDE_DIRS})
  if(EXISTS "${_izwi_dir}/ATen/ATen.h")
    file(STRINGS "${_izwi_dir}/ATen/ATen.h" _izwi_needs_cxx20 REGEX "C\\+\\+20 or later")
    if(_izwi_needs_cxx20)
      set(IZWI_CXX_STANDARD 20)
    endif()
    break()
  endif()
endforeach()
set(CMAKE_CXX_STANDARD ${IZWI_CXX_STANDARD})
message(STATUS "Compiling as C++${IZWI_CXX_STANDARD} (libtorch ${Torch_VERSION})")

# websocketpp 0.8.2 (Debian 12) does not compile as C++20 (constructors and destructors named with
# template arguments). The sources that include it include no libtorch, so under C++20 they compile
# as C++17, without the precompiled header (which holds libtorch, compiled as C++20). Call from the
# CMakeLists.txt of the directory whose target compiles them.
function(izwi_websocketpp_sources)
  if(IZWI_CXX_STANDARD GREATER 17)
    set_source_files_properties(${ARGN} PROPERTIES SKIP_PRECOMPILE_HEADERS ON COMPILE_OPTIONS -std=c++17)
  endif()
endfunction()
