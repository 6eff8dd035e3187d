#!/usr/bin/env bash
# Builds izwi with CUDA on a GPU machine that has nvcc, cmake and python3 with a CUDA torch but no
# package archive: the Debian packages cmake/device_deps.sh downloaded into .device-deps/ are
# unpacked (dpkg -x, nothing installed) into .device-prefix/, and CMake finds libtorch through the
# torch package. Usage: scripts/device_build.sh [build dir, default build-cuda] [extra cmake arguments...]
# DEVICE_BUILD_TARGETS (space-separated) builds only those targets; JOBS sets the build's jobs
# (default: every core). docs/gpu.md describes the whole procedure.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
debs="$root/.device-deps"
prefix="$root/.device-prefix"
build="${1:-$root/build-cuda}"
shift || true
arch=x86_64-linux-gnu
libdir="$prefix/usr/lib/$arch"

ls "$debs"/*.deb >/dev/null 2>&1 || { echo "device_build: no .deb files in $debs (run cmake/device_deps.sh)" >&2; exit 1; }
command -v nvcc >/dev/null || { echo "device_build: nvcc is not on PATH" >&2; exit 1; }

# 1. Unpack every package into the prefix (again when the .debs are newer than the last unpack).
if [ ! -f "$prefix/.unpacked" ] || [ -n "$(find "$debs" -name '*.deb' -newer "$prefix/.unpacked")" ]; then
  rm -rf "$prefix"
  mkdir -p "$prefix"
  for deb in "$debs"/*.deb; do dpkg -x "$deb" "$prefix"; done
  # The .pc files name /usr; point them at the prefix. Their Requires.private lines name -dev
  # packages left out of .device-deps (they matter only for static linking), so they go.
  for pc in "$libdir"/pkgconfig/*.pc "$prefix"/usr/share/pkgconfig/*.pc; do
    [ -f "$pc" ] || continue
    # Some name /usr in their flags only (soxr.pc: -L/usr/lib/...).
    sed -i -e "s|^\([A-Za-z_]*\)=/usr|\1=$prefix/usr|" -e "s|\([ :]-[LI]\)/usr/|\1$prefix/usr/|g" \
      -e '/^Requires.private:/d' "$pc"
  done
  # Symlinks to absolute paths (libfoo.so -> /usr/lib/...) would point outside the prefix.
  find "$prefix" -type l -lname '/*' | while read -r link; do
    ln -sfn "$prefix$(readlink "$link")" "$link"
  done
  touch "$prefix/.unpacked"
fi

# The machine's own cmake, ninja and pkg-config come first; the unpacked ones stand in for missing ones.
export PATH="$PATH:$prefix/usr/bin"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # the unpacked cmake's libraries, the tests'
export PKG_CONFIG_LIBDIR="$libdir/pkgconfig:$prefix/usr/share/pkgconfig"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# 2. libtorch from the torch package (IZWI_TORCH_PREFIX: another libtorch, e.g. an unpacked archive).
torch_prefix="${IZWI_TORCH_PREFIX:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')}"
echo "device_build: libtorch from $torch_prefix"

# 3. Configure. Debian's package configs live under the multiarch directory, which CMake searches
#    only when it knows the architecture. The server's packages are not in the .deb set (it is not
#    built). Without node (the tokenizer parity tests' reference at
#    run time) the configure still passes; those tests then fail, the CUDA ones do not need it.
cmake -S "$root" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DIZWI_WITH_CUDA=ON \
  -DCMAKE_LIBRARY_ARCHITECTURE="$arch" \
  -DCMAKE_PREFIX_PATH="$prefix/usr;$libdir/cmake;$torch_prefix" \
  -DCMAKE_INCLUDE_PATH="$prefix/usr/include" \
  -DCMAKE_LIBRARY_PATH="$libdir" \
  -DCMAKE_BUILD_RPATH="$libdir" \
  -DIZWI_NODE="$(command -v node || echo /bin/false)" \
  -DIZWI_BUILD_SERVER=OFF \
  "$@"

# 4. Build with every core, going on past a failed source: one compile error against an untried
#    torch must not leave every other target unbuilt (the exit status still says it failed).
targets=()
for target in ${DEVICE_BUILD_TARGETS:-}; do targets+=(--target "$target"); done
keep_going=(-- -k)
[ ${#generator[@]} -gt 0 ] && keep_going=(-- -k 0)
cmake --build "$build" -j "${JOBS:-$(nproc)}" "${targets[@]}" "${keep_going[@]}"
echo "device_build: built in $build; run tests with LD_LIBRARY_PATH=$libdir ctest --test-dir $build -R cuda"
