#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz/fuzz_<name>.cpp) with ASan + UBSan, each for a fixed time
# on a copy of its seed corpus, and prints a table: target, runs, coverage, new corpus files,
# crashes. See docs/testing.md#fuzzing.
#
#   scripts/fuzz.sh [seconds-per-target] [target...]      (default: 60 s, every target)
#
# Environment: IZWI_FUZZ_BUILD (build folder, default build-fuzz), JOBS (build jobs, default 2),
# FUZZ_NO_BUILD=1 (run the binaries as built, e.g. while another build runs in the folder),
# FUZZ_OUT (where each run's corpus, log and crash files are kept, default $IZWI_FUZZ_BUILD/fuzz-runs).
# New corpus entries are not copied back: add the interesting ones (always the crashing ones) to
# tests/fuzz/corpus/<name>/ by hand. Exit status 1 if any target crashed.
set -euo pipefail

seconds=${1:-60}
if [[ $# -gt 0 ]]; then shift; fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${IZWI_FUZZ_BUILD:-$root/build-fuzz}
out=${FUZZ_OUT:-$build/fuzz-runs}/$(date +%Y%m%d-%H%M%S)

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for f in "$root"/tests/fuzz/fuzz_*.cpp; do
    name=$(basename "$f" .cpp)
    targets+=("${name#fuzz_}")
  done
fi

# Inputs longer than this are not tried (per target; 4096 otherwise).
max_len_of() {
  case $1 in
    audio_reader|log_mel|tokenizer_json) echo 65536 ;;
    hf_config|tokenizer_config|sharded_index|engine_config|generation_config) echo 16384 ;;
    *) echo 4096 ;;
  esac
}

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (apt-get install -y clang libclang-rt-14-dev)" >&2
  exit 2
fi
if [[ ! -f $build/build.ninja ]]; then
  # The library is instrumented too (IZWI_FUZZ adds -fsanitize=fuzzer-no-link,address); UBSan is
  # added here, aborting on the first report.
  ubsan="-fsanitize=undefined -fno-sanitize-recover=undefined -fno-sanitize=vptr,function"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DIZWI_FUZZ=ON -DIZWI_BUILD_BENCHMARKS=OFF -DIZWI_BUILD_EXAMPLES=OFF \
        -DCMAKE_CXX_FLAGS="$ubsan" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=undefined" \
        -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=undefined"
fi
if [[ -z ${FUZZ_NO_BUILD:-} ]]; then
  build_targets=()
  for t in "${targets[@]}"; do build_targets+=("fuzz_$t"); done
  cmake --build "$build" -j"${JOBS:-2}" --target "${build_targets[@]}"
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/scripts/lsan.supp}
mkdir -p "$out"
rows=()
failed=0
for t in "${targets[@]}"; do
  work=$out/$t
  mkdir -p "$work/artifacts"
  cp -r "$root/tests/fuzz/corpus/$t" "$work/corpus"
  before=$(find "$work/corpus" -type f | wc -l)
  echo "== $t: ${seconds} s, max_len $(max_len_of "$t"), log $work/log" >&2
  set +e
  "$build/tests/fuzz_$t" -max_len="$(max_len_of "$t")" -rss_limit_mb=2048 -timeout=30 \
      -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
      "$work/corpus" >"$work/log" 2>&1
  status=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$' | tail -1 || true)
  cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1 | grep -o '[0-9]*$' || true)
  after=$(find "$work/corpus" -type f | wc -l)
  crashes=$(find "$work/artifacts" -type f | wc -l)
  if [[ $status -ne 0 || $crashes -gt 0 ]]; then failed=1; fi
  rows+=("$(printf '%-20s %12s %9s %12s %8s %s' "$t" "${runs:-?}" "${cov:-?}" "$((after - before))" "$crashes" \
           "$([[ $crashes -gt 0 ]] && echo "$work/artifacts" || true)")")
done

printf '\n%-20s %12s %9s %12s %8s\n' target runs coverage "new inputs" crashes
for r in "${rows[@]}"; do echo "$r"; done
echo "logs and corpora: $out"
exit $failed
