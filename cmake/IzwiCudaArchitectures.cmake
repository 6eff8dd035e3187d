# The GPU architectures izwi's CUDA kernels are compiled for: CMAKE_CUDA_ARCHITECTURES when given
# (e.g. 90 for an H100/H200 alone, or native), else the A100 and the H100 (80;90). torch's CMake
# config ignores CMAKE_CUDA_ARCHITECTURES (it warns and resets it) and adds -gencode flags of its
# own from TORCH_CUDA_ARCH_LIST, or for the GPUs it detects when that is unset; that list is set
# here from the same architectures unless the user set it, so both compile for the same GPUs.
if(CMAKE_CUDA_ARCHITECTURES)
  set(IZWI_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
else()
  set(IZWI_CUDA_ARCHITECTURES 80 90)
endif()
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST}
   AND NOT IZWI_CUDA_ARCHITECTURES MATCHES "native|all")
  set(TORCH_CUDA_ARCH_LIST "")
  foreach(_izwi_arch ${IZWI_CUDA_ARCHITECTURES})
    # 90 -> 9.0, 90a -> 9.0a, 100-real -> 10.0
    string(REGEX REPLACE "^([0-9]+)([0-9])([a-z]?)(-real|-virtual)?$" "\\1.\\2\\3" _izwi_arch "${_izwi_arch}")
    list(APPEND TORCH_CUDA_ARCH_LIST "${_izwi_arch}")
  endforeach()
endif()
message(STATUS "CUDA kernels for ${IZWI_CUDA_ARCHITECTURES}; TORCH_CUDA_ARCH_LIST ${TORCH_CUDA_ARCH_LIST}")
