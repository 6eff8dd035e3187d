#!/usr/bin/env bash
# The GPU machines build against a recent torch wheel, never against the Debian libtorch 1.13 this
# machine has; a build break there costs a GPU run. This checks the engine sources whose code only
# such a libtorch compiles (the IZWI_WITH_CUDA branches, the __has_include branches on libtorch
# 2.x ops) and the CUDA tests against a recent libtorch's headers: Debian's libtorch-dev 2.14 (from
# unstable; its package holds the c10/cuda and ATen/cuda headers too), unpacked, not installed.
# Exit 77 (skipped) when the pinned package cannot be downloaded (it leaves the archive once
# superseded: update the pin to the version unstable then has).
# Usage: scripts/check_torch_release_headers.sh NVCC CACHE_DIR
set -euo pipefail

nvcc="$1"
cache="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
deb_name=libtorch-dev_2.14.1+dfsg-1_amd64.deb
url="http://deb.debian.org/debian/pool/main/p/pytorch/$deb_name"

include="$cache/libtorch-2.14/usr/include"
if [ ! -f "$include/ATen/ATen.h" ]; then
  mkdir -p "$cache"
  if ! curl -fsS --max-time 120 -o "$cache/$deb_name.part" "$url"; then
    echo "check_torch_release_headers: cannot download $url; skipped" >&2
    exit 77
  fi
  mv "$cache/$deb_name.part" "$cache/$deb_name"
  rm -rf "$cache/libtorch-2.14"
  dpkg-deb -x "$cache/$deb_name" "$cache/libtorch-2.14"
  rm "$cache/$deb_name"
fi
IZWI_ENGINE_SOURCES_ONLY=1 bash "$root/scripts/cuda_kernels_compile.sh" "$nvcc" "$include" \
  "$include/torch/csrc/api/include"
