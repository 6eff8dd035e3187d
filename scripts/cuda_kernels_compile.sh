#!/usr/bin/env bash
# Compiles every CUDA kernel file (src/kernels/cuda/*.cu) for sm_90 with the given nvcc, one at a
# time into a temporary directory: a machine with nvcc but no GPU (or no CUDA libtorch) checks that
# the kernels build. Usage: scripts/cuda_kernels_compile.sh [nvcc]
set -euo pipefail

nvcc="${1:-nvcc}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

count=0
for source in "$root"/src/kernels/cuda/*.cu; do
  echo "nvcc -c $(basename "$source")"
  "$nvcc" -c -std=c++17 -arch=sm_90 -Werror all-warnings -I"$root/src" "$source" -o "$out/$(basename "$source").o"
  count=$((count + 1))
done
[ "$count" -gt 0 ] || { echo "no .cu files under src/kernels/cuda" >&2; exit 1; }
echo "cuda_kernels_compile: $count files compiled for sm_90"
