#!/usr/bin/env bash
# The torch wheels a CUDA user installs differ from Debian's libtorch in two ways that broke or
# would break the build: they ship their own, newer fmt headers beside libtorch's (spdlog, built for
# Debian's fmt, does not compile against them), and from libtorch 2.14 their headers refuse any
# standard before C++20. This configures izwi against a stand-in for such a libtorch (this machine's
# libtorch whose include directories first hold an fmt/ that fails to compile and an ATen/ATen.h
# that fails below C++20, then includes the real one) and compiles engine sources that log and
# include libtorch: cmake/IzwiFmtFirst.cmake must keep that fmt out of reach, and
# cmake/IzwiCxxStandard.cmake must choose C++20 and keep the server's websocketpp sources on C++17.
# Usage: scripts/check_torch_wheel.sh TORCH_DIR (the real libtorch's CMake config folder)
set -euo pipefail

torch_dir="$1"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/wheel-include/fmt" "$work/wheel-include/ATen" "$work/torch-config"
for header in core.h format.h ostream.h ranges.h chrono.h; do
  echo '#error "the fmt bundled with libtorch was used instead of the fmt spdlog is built for"' \
    >"$work/wheel-include/fmt/$header"
done
# The first lines of libtorch 2.14's ATen/ATen.h.
cat >"$work/wheel-include/ATen/ATen.h" <<'HEADER'
#pragma once
#if !defined(_MSC_VER) && __cplusplus < 202002L
#error C++20 or later compatible compiler is required to use ATen.
#endif
#include_next <ATen/ATen.h>
HEADER
cat >"$work/torch-config/TorchConfig.cmake" <<CONFIG
include("$torch_dir/TorchConfig.cmake")
list(PREPEND TORCH_INCLUDE_DIRS "$work/wheel-include")
get_target_property(_dirs torch INTERFACE_INCLUDE_DIRECTORIES)
set_target_properties(torch PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "$work/wheel-include;\${_dirs}")
CONFIG

command -v ninja >/dev/null || { echo "check_torch_wheel: needs ninja" >&2; exit 1; }
cmake -S "$root" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTorch_DIR="$work/torch-config" \
  -DIZWI_BUILD_TESTS=OFF -DIZWI_BUILD_EXAMPLES=OFF -DIZWI_BUILD_BENCHMARKS=OFF -DIZWI_BUILD_SERVER=ON \
  -DIZWI_PRECOMPILED_HEADERS=OFF >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
grep -q "has its own fmt" "$work/configure.log" || { echo "the stand-in's fmt was not detected" >&2; exit 1; }
grep -q "Compiling as C++20" "$work/configure.log" || { echo "the stand-in's C++20 requirement was not detected" >&2; exit 1; }
# Engine sources that log through spdlog and include libtorch (the first one failed so with a
# wheel), and the server's WebSocket listener (websocketpp 0.8.2 fails as C++20).
# Each object's own compile command, without building what its target depends on.
for object in src/CMakeFiles/izwi_objects.dir/engine/request_channel.cpp.o \
  src/CMakeFiles/izwi_objects.dir/kernels/backend.cpp.o server/CMakeFiles/izwi_server.dir/realtime_server.cpp.o; do
  echo "compiling $object"
  (cd "$work/build" && mkdir -p "$(dirname "$object")" && eval "$(ninja -t commands "$object" | tail -1)")
done
echo "check_torch_wheel: engine sources compile as C++20 with the stand-in libtorch's own fmt first in its include path, and the WebSocket listener as C++17"
