#!/usr/bin/env bash
# Downloads, without installing, the Debian packages izwi builds against besides libtorch (the list of
# cmake/install_deps.sh) and the libraries they need, as .deb files into .device-deps/ of the checkout.
# A GPU machine without a package archive unpacks them with scripts/device_build.sh (docs/gpu.md).
# Packages every Debian system has (priority required or important: libc6, libstdc++6, zlib ...) are
# left out, as are build tools the GPU machine brings (compilers, python3).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.device-deps"

packages=(
  cmake ninja-build pkgconf  # the GPU machine may have none of them
  libeigen3-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libpcre2-dev libutf8proc-dev libsentencepiece-dev libsndfile1-dev libsoxr-dev libcli11-dev
  libcpp-httplib-dev libzmq3-dev libmsgpack-cxx-dev libwebsocketpp-dev libasio-dev
)

# Left out: compilers, interpreters and core libraries the GPU machine has; -dev packages that only
# the Requires.private of a .pc file names (izwi links shared libraries, and device_build.sh drops
# those lines, so only the runtime libraries behind them are needed); sources and docs.
excluded='^(gcc|g\+\+|cpp|binutils|libgcc|libstdc\+\+|libc6|libc-dev|linux-libc-dev|libcrypt|lib(a|t|l|ub|hwa)san|libitm|libquadmath|libatomic|libgomp|python3|perl|libperl|lib.*-perl$|libgdbm|libdb5|dpkg|debconf|usrmerge|usr-is-merged|libsystemd|libelogind|libselinux|libproc2|libcap2|libacl1|libtinfo|libncurses|libbz2|liblzma|libzstd|liblz4|libexpat|libffi|libgmp|libgnutls|libgcrypt|libgpg-error|libidn2|libunistring|libp11-kit|libtasn1|libnettle|libhogweed|libssl|zlib1g|googletest|catch2|icu-devtools|libicu-dev|libxml2-dev|libnorm-dev|libpgm-dev|libsodium-dev|libbsd-dev|libmd-dev|krb5-multidev|comerr-dev|libgssrpc|libkadm5|libkdb5|libbrotli-dev|libflac-dev|libogg-dev|libvorbis-dev|libopus-dev|libmpg123-dev|libkrb5-dev|libnsl-dev|libtirpc-dev|rpcsvc-proto)'

# Every package the list depends on, recursively (Depends and PreDepends only).
mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances "${packages[@]}" | grep -v '^ ' | grep -v '^<' | sort -u)

wanted=()
for p in "${closure[@]}"; do
  [[ "$p" =~ $excluded ]] && continue
  priority="$(apt-cache show --no-all-versions "$p" 2>/dev/null | sed -n 's/^Priority: //p' | head -1)"
  [[ "$priority" == required || "$priority" == important ]] && continue
  wanted+=("$p")
done

mkdir -p "$dest"
cd "$dest"
rm -f ./*.deb
apt-get download "${wanted[@]}"
echo "device_deps: ${#wanted[@]} packages, $(du -sh . | cut -f1) in $dest"
