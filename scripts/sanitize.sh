#!/usr/bin/env bash
# Builds the tests with a sanitizer in a separate build folder and runs them.
#
#   scripts/sanitize.sh asan [gtest filter]   AddressSanitizer + UBSan, the whole suite
#   scripts/sanitize.sh tsan [gtest filter]   ThreadSanitizer, the engine, concurrency and
#                                             transcription suites ('*Engine*:*Transcription*:-*.Cli*':
#                                             the CLI tests run binaries this build does not make)
#
# Debug with -O1 (fast enough to run the model fixtures, still precise stacks). Build folders:
# build-asan, build-tsan (override with IZWI_SANITIZE_BUILD_DIR). Not part of ctest: the TSan run
# takes tens of minutes on 2 cores. libtorch and libgomp are not instrumented: races inside
# them, and OpenMP's own synchronisation, are suppressed (scripts/tsan.supp); a report that names
# an izwi frame is a finding.
set -euo pipefail

mode="${1:-}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="${IZWI_SANITIZE_JOBS:-2}"
case "$mode" in
  asan)
    flags="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    link="-fsanitize=address,undefined"
    filter="${2:-*}"
    binaries=(izwi_unit_tests izwi_parity_tests izwi_integration_tests)
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
    ;;
  tsan)
    flags="-O1 -g -fsanitize=thread -fno-omit-frame-pointer"
    link="-fsanitize=thread"
    filter="${2:-*Engine*:*Transcription*:-*.Cli*}"
    binaries=(izwi_integration_tests)
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp}"
    # One intra-op thread: libgomp is not instrumented, so TSan cannot see the barrier that ends
    # a parallel region and reports the worker's next write to anything a kernel thread read as a
    # race. The engine's own threads (worker, callers, callbacks) are what this run checks.
    export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
    ;;
  *)
    echo "usage: $0 asan|tsan [gtest filter]" >&2
    exit 2
    ;;
esac
build="${IZWI_SANITIZE_BUILD_DIR:-$root/build-$mode}"

launcher=()
if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# Benchmarks stay on for asan: the CLI contract tests run izwi-bench and izwi-make-checkpoint.
bench=$([ "$mode" = asan ] && echo ON || echo OFF)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DIZWI_BUILD_BENCHMARKS="$bench" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" "${launcher[@]}"
# The CLI tests run the example binaries, so they are built too.
cmake --build "$build" -j"$jobs" --target "${binaries[@]}" $([ "$mode" = asan ] && echo all)

status=0
for binary in "${binaries[@]}"; do
  echo "== $mode: $binary --gtest_filter='$filter'"
  "$build/tests/$binary" --gtest_filter="$filter" || status=1
done
exit "$status"
