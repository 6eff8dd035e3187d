# Third-party packages. All come from Debian (cmake/install_deps.sh installs them), libtorch from
# Debian or from the torch package a CUDA user installs (docs/gpu.md).
if(IZWI_WITH_CUDA)
  include(IzwiCudaArchitectures)  # before torch's config, which reads TORCH_CUDA_ARCH_LIST
endif()
find_package(Torch REQUIRED)
include(IzwiCxxStandard)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
include(IzwiFmtFirst)
find_package(nlohmann_json 3 REQUIRED)
find_package(OpenMP REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
pkg_check_modules(SNDFILE REQUIRED IMPORTED_TARGET sndfile)
pkg_check_modules(SOXR REQUIRED IMPORTED_TARGET soxr)
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)  # tokenizer.model without tokenizer.json
find_package(CLI11 CONFIG REQUIRED)
if(IZWI_BUILD_SERVER)
  pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # HTTP/1.1 server, SSE
  pkg_check_modules(ZMQ REQUIRED IMPORTED_TARGET libzmq)            # KV-events PUB socket
  find_path(WEBSOCKETPP_INCLUDE_DIR websocketpp/server.hpp REQUIRED)  # live-transcription WebSocket
  find_path(ASIO_INCLUDE_DIR asio.hpp REQUIRED)                       # its event loop (standalone asio)
  find_package(msgpack CONFIG REQUIRED)                             # KV-events wire format (msgpackc-cxx)
endif()

if(IZWI_WITH_CUDA)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)  # CUDA::cudart for the kernels library
endif()
