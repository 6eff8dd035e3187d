#!/usr/bin/env bash
# The torch wheels ship their own, newer fmt headers beside libtorch's; spdlog, built for Debian's
# fmt, does not compile against them. This configures izwi against a stand-in for such a libtorch
# (this machine's libtorch whose include directories first hold an fmt/ that fails to compile) and
# compiles an engine source that logs: cmake/IzwiFmtFirst.cmake must keep that fmt out of reach.
# Usage: scripts/check_torch_wheel_fmt.sh TORCH_DIR (the real libtorch's CMake config folder)
set -euo pipefail

torch_dir="$1"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/wheel-include/fmt" "$work/torch-config"
for header in core.h format.h ostream.h ranges.h chrono.h; do
  echo '#error "the fmt bundled with libtorch was used instead of the fmt spdlog is built for"' \
    >"$work/wheel-include/fmt/$header"
done
cat >"$work/torch-config/TorchConfig.cmake" <<CONFIG
include("$torch_dir/TorchConfig.cmake")
list(PREPEND TORCH_INCLUDE_DIRS "$work/wheel-include")
get_target_property(_dirs torch INTERFACE_INCLUDE_DIRECTORIES)
set_target_properties(torch PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "$work/wheel-include;\${_dirs}")
CONFIG

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DTorch_DIR="$work/torch-config" \
  -DIZWI_BUILD_TESTS=OFF -DIZWI_BUILD_EXAMPLES=OFF -DIZWI_BUILD_BENCHMARKS=OFF -DIZWI_BUILD_SERVER=OFF \
  -DIZWI_PRECOMPILED_HEADERS=OFF >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
grep -q "has its own fmt" "$work/configure.log" || { echo "the stand-in's fmt was not detected" >&2; exit 1; }
# An engine source that logs through spdlog and includes libtorch (one of those that failed so).
object=src/CMakeFiles/izwi_objects.dir/engine/request_channel.cpp.o
cmake --build "$work/build" --target "$object"
echo "check_torch_wheel_fmt: $object compiles with the stand-in libtorch's own fmt first in its include path"
