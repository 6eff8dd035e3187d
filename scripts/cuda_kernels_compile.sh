#!/usr/bin/env bash
# Compiles every CUDA kernel file (src/kernels/cuda/*.cu) for sm_90 with the given nvcc, one at a
# time into a temporary directory: a machine with nvcc but no GPU (or no CUDA libtorch) checks that
# the kernels build, the engine sources with CUDA branches (op dispatch points, step staging,
# device sampling) beside them, and the kernel tests (tests/cuda).
# Usage: scripts/cuda_kernels_compile.sh [nvcc [libtorch include dirs...]]
# IZWI_ENGINE_SOURCES_ONLY=1 skips the .cu files (they do not include libtorch), for a check of the
# engine sources against another libtorch's headers (scripts/check_torch_release_headers.sh).
set -euo pipefail

nvcc="${1:-nvcc}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

if [ "${IZWI_ENGINE_SOURCES_ONLY:-0}" != 1 ]; then
  count=0
  for source in "$root"/src/kernels/cuda/*.cu; do
    echo "nvcc -c $(basename "$source")"
    "$nvcc" -c -std=c++17 -arch=sm_90 -Werror all-warnings -I"$root/src" "$source" -o "$out/$(basename "$source").o"
    count=$((count + 1))
  done
  [ "$count" -gt 0 ] || { echo "no .cu files under src/kernels/cuda" >&2; exit 1; }
  echo "cuda_kernels_compile: $count files compiled for sm_90"
fi

# The engine's CUDA branches (compiled only with IZWI_WITH_CUDA), against
# the CUDA runtime headers nvcc itself uses and the given libtorch include directories. nvcc names
# its include directories in a dry run; the layout beside the binary differs between installs.
cuda_includes=()
while read -r dir; do
  [ -f "$dir/cuda_runtime_api.h" ] && cuda_includes+=(-isystem "$dir")
done < <("$nvcc" --dryrun -x cu -c /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ \(SYSTEM_\)\{0,1\}INCLUDES=//p' |
  grep -o -- '-I[^" ]*\|"/[^"]*"' | sed 's/^-I//; s/"//g')
if [ "${#cuda_includes[@]}" -eq 0 ] && [ ! -f /usr/include/cuda_runtime_api.h ]; then
  echo "cuda_kernels_compile: no cuda_runtime_api.h in the include directories $nvcc names (nvcc --dryrun)" >&2
  exit 1
fi
torch_includes=()
standard=c++17
for dir in "${@:2}"; do
  # The compiler's own system directory must stay last in its search order (#include_next).
  [ "$dir" = /usr/include ] || torch_includes+=(-isystem "$dir")
  # C++20 where libtorch requires it, as cmake/IzwiCxxStandard.cmake decides for the build.
  if [ -f "$dir/ATen/ATen.h" ] && grep -q 'C++20 or later' "$dir/ATen/ATen.h"; then standard=c++20; fi
done
# A CPU build of libtorch (Debian's) ships the c10/cuda headers without the one its CMake generates
# for CUDA builds; it only says whether c10_cuda is a shared library. Stand in for it when missing.
macros=c10/cuda/impl/cuda_cmake_macros.h
if ! printf '#include <%s>\n' "$macros" | c++ -E -x c++ "${torch_includes[@]}" - >/dev/null 2>&1; then
  mkdir -p "$out/shim/$(dirname "$macros")"
  echo '#define C10_CUDA_BUILD_SHARED_LIBS' >"$out/shim/$macros"
  torch_includes+=(-isystem "$out/shim")
fi
# Every engine source with a CUDA branch (the op dispatch points, the step staging, device
# sampling) or a branch on the libtorch version's headers (__has_include of an ATen op); with
# -fopenmp, as the project compiles every source (the CPU kernels' inline row functions use
# OpenMP's simd pragmas).
mapfile -t cuda_branches < <(grep -rlE --include='*.cpp' 'IZWI_WITH_CUDA|__has_include\(<ATen/' "$root/src" | sort)
[ "${#cuda_branches[@]}" -gt 0 ] || { echo "no source under src/ has an IZWI_WITH_CUDA branch" >&2; exit 1; }
cxx_flags=(-std=$standard -fopenmp -Wall -Wextra -Werror -Wno-unused-parameter -D_GLIBCXX_USE_CXX11_ABI=1 -DIZWI_WITH_CUDA=1
  -I"$root/include" -I"$root/src" "${torch_includes[@]}" "${cuda_includes[@]}")
# ATen/ATen.h, which they all include, parsed once (about 11 s each otherwise); -Winvalid-pch with
# -Werror fails the run if the compiler would not use it.
mkdir -p "$out/pch"
echo '#include <ATen/ATen.h>' >"$out/pch/aten.h"
c++ "${cxx_flags[@]}" -x c++-header "$out/pch/aten.h" -o "$out/pch/aten.h.gch"
for source in "${cuda_branches[@]}"; do
  echo "c++ -DIZWI_WITH_CUDA=1 -c $(basename "$source")"
  c++ -c "${cxx_flags[@]}" -Winvalid-pch -include "$out/pch/aten.h" "$source" -o "$out/$(basename "$source").o"
done
echo "cuda_kernels_compile: ${#cuda_branches[@]} engine sources compile with IZWI_WITH_CUDA ($standard)"

# The kernel tests (tests/cuda, built only by a CUDA build and run on a GPU machine): plain C++ on
# the CUDA runtime, syntax-checked with the same flags, so a test written here is known to compile
# before a GPU run. Their aggregates leave trailing fields zero on purpose (DeviceSeq's padding).
mapfile -t cuda_tests < <(find "$root/tests/cuda" -name '*.cpp' | sort)
for source in "${cuda_tests[@]}"; do
  echo "c++ -fsyntax-only tests/cuda/$(basename "$source")"
  c++ -fsyntax-only "${cxx_flags[@]}" -Wno-missing-field-initializers -I"$root/tests" "$source"
done
echo "cuda_kernels_compile: ${#cuda_tests[@]} kernel tests under tests/cuda compile"
