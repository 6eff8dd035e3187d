#!/usr/bin/env bash
# Builds izwi-soak (Release, in build/ unless IZWI_BUILD says otherwise) and runs it: N random
# public-API operations from 4 threads on long-lived engines, checking after every round that
# nothing leaked or hung. See docs/testing.md#soak-test.
#
#   scripts/soak.sh [ops] [izwi-soak options...]     (default 100000 operations)
#   scripts/soak.sh 5000 --seed 7 --no-tts
#
# Exit status: izwi-soak's (0 all held, 1 an invariant broke, a call hung or RSS grew too much).
set -euo pipefail

ops=${1:-100000}
if [[ $# -gt 0 ]]; then shift; fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${IZWI_BUILD:-$root/build}
if [[ ! -f $build/build.ninja && ! -f $build/Makefile ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" -j"${JOBS:-2}" --target izwi-soak
exec "$build/tests/izwi-soak" --ops "$ops" "$@"
