#!/usr/bin/env bash
# Downloads, without installing, the Debian packages a GPU machine needs to build izwi's engine,
# tests and benchmarks (not the server) and the libraries they need, as .deb files into
# .device-deps/ of the checkout. scripts/gpu_check.sh (or scripts/device_build.sh) unpacks them
# there (docs/gpu.md). The GPU machine brings its compiler, nvcc, cmake, ninja, python3 and torch,
# so those are left out, as are packages every Debian or Ubuntu system has (priority required or
# important: libc6, libstdc++6, zlib ...) and -dev packages only a .pc file's Requires.private names
# (izwi links shared libraries).
#   cmake/device_deps.sh            download into .device-deps/
#   cmake/device_deps.sh --size     print the bytes the .deb set takes, from the package lists
#                                   (apt-cache), without downloading; exit 77 when they cannot tell
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.device-deps"

packages=(
  pkgconf  # the GPU machine may have no pkg-config
  libeigen3-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libpcre2-dev libutf8proc-dev libsentencepiece-dev libsndfile1-dev libsoxr-dev libcli11-dev
)

excluded='^(gcc|g\+\+|cpp|binutils|libgcc|libstdc\+\+|libc6|libc-dev|linux-libc-dev|libcrypt|libgomp|pkg-config|googletest|catch2|libkrb5|libk5crypto|libkeyutils|libgssapi|libcom-err|libssl|libnsl|libtirpc|rpcsvc-proto|libflac-dev|libogg-dev|libvorbis-dev|libopus-dev|libmpg123-dev|libpcre2-(16|32)-0|libpcre2-posix)'

# Every package the list depends on, recursively (Depends and PreDepends only).
mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances "${packages[@]}" 2>/dev/null | grep -v '^ ' | grep -v '^<' | sort -u)

# Each package's priority and size, from one look-up of them all.
declare -A priority size
while read -r name prio bytes; do
  priority[$name]=$prio
  size[$name]=$bytes
done < <(apt-cache show --no-all-versions "${closure[@]}" 2>/dev/null | awk '
  /^Package: / {name = $2} /^Priority: / {prio = $2} /^Size: / {bytes = $2}
  /^$/ {if (name != "") print name, prio, bytes; name = ""; prio = "-"; bytes = 0}
  END {if (name != "") print name, prio, bytes}')

wanted=()
for p in "${closure[@]}"; do
  [[ "$p" =~ $excluded ]] && continue
  [[ "${priority[$p]:-}" == required || "${priority[$p]:-}" == important ]] && continue
  wanted+=("$p")
done

if [[ "${1:-}" == --size ]]; then
  total=0
  [[ ${#wanted[@]} -ge ${#packages[@]} ]] || { echo "device_deps: the package lists are missing (run apt-get update)" >&2; exit 77; }
  for p in "${wanted[@]}"; do
    [[ -n "${size[$p]:-}" ]] || { echo "device_deps: the package lists do not know $p (run apt-get update)" >&2; exit 77; }
    total=$((total + size[$p]))
  done
  echo "$total"
  exit 0
fi

mkdir -p "$dest"
cd "$dest"
rm -f ./*.deb
apt-get download "${wanted[@]}"
echo "device_deps: ${#wanted[@]} packages, $(du -sh . | cut -f1) in $dest"
