# The torch wheels (pip install torch) ship a newer fmt in their include directory, which every
# target that uses libtorch searches before the fmt found here; spdlog is built for the fmt found
# here and does not compile against another ('basic_runtime' is not a member of 'fmt'). Where
# libtorch's include directories hold an fmt of their own, a folder holding only a link to this
# fmt's headers goes first on every target's include path, so one fmt is seen everywhere.
get_target_property(_izwi_fmt_dirs fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
find_path(IZWI_FMT_INCLUDE_DIR fmt/core.h HINTS ${_izwi_fmt_dirs})
set(IZWI_TORCH_FMT_DIR "")
foreach(_izwi_dir ${TORCH_INCLUDE_DIRS})
  if(EXISTS "${_izwi_dir}/fmt/core.h" AND NOT _izwi_dir STREQUAL IZWI_FMT_INCLUDE_DIR)
    set(IZWI_TORCH_FMT_DIR "${_izwi_dir}")
  endif()
endforeach()
if(IZWI_TORCH_FMT_DIR)
  set(_izwi_shim "${CMAKE_BINARY_DIR}/fmt-first")
  file(REMOVE_RECURSE "${_izwi_shim}")
  file(MAKE_DIRECTORY "${_izwi_shim}")
  file(CREATE_LINK "${IZWI_FMT_INCLUDE_DIR}/fmt" "${_izwi_shim}/fmt" SYMBOLIC)
  include_directories(BEFORE SYSTEM "${_izwi_shim}")
  message(STATUS "libtorch's include directory ${IZWI_TORCH_FMT_DIR} has its own fmt; "
                 "every target sees the fmt of ${IZWI_FMT_INCLUDE_DIR} first")
endif()
