#!/usr/bin/env bash
# Everything izwi checks on a GPU, in one call on a bare CUDA machine: nvcc, cmake, g++ and python3
# with a CUDA torch, no package archive, the .deb files of cmake/device_deps.sh in .device-deps/.
#
#   scripts/gpu_check.sh OUT_DIR [BUDGET_SECONDS]     (default 480: 8 minutes in all)
#
# 1. unpacks the .debs, configures against the machine's torch for its GPU's architecture, builds
#    the targets the checks need with every core (scripts/device_build.sh);
# 2. runs the CUDA kernel tests, and compute-sanitizer memcheck over them;
# 3. runs the suites that move models to the GPU (IZWI_TEST_DEVICE=cuda; GPU_SUITES below);
# 4. runs izwi-bench on the llama-3.2-1b, qwen3-0.6b and lfm2-1.2b shapes in bf16, and each speech
#    bench that takes --device;
# 5. runs the same text work in transformers (scripts/transformers_baseline.py) when it imports;
# 6. writes OUT_DIR/summary.json (commit, GPU, each suite's counts, each benchmark's figures and
#    their ratios to the roofline and to transformers), OUT_DIR/summary.txt (the same as a table),
#    OUT_DIR/steps.log (what ran, when, with which exit status) and OUT_DIR/logs.tar.gz (every
#    step's output): four files.
# Every step has a time box cut to what is left of the budget, so the logs survive a failing or
# hanging step; a step with no time left is skipped and says so. Exit status 0 when every check
# ran and passed, 1 otherwise (the benchmarks' figures are reported, not judged).
set -u

out="${1:?usage: scripts/gpu_check.sh OUT_DIR [BUDGET_SECONDS]}"
budget="${2:-480}"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
logs="$work/logs"
models="$work/models"
build="$work/build"
mkdir -p "$logs" "$models"
start=$(date +%s)
deadline=$((start + budget))
: >"$out/steps.log"
: >"$logs/status.tsv"

# The suites that run models on the GPU with IZWI_TEST_DEVICE=cuda: binary and gtest filter.
GPU_SUITES=(
  "text_parity izwi_parity_tests *TextModelParity*"
  "engine_parity izwi_integration_tests *EngineParity*:*EngineOpProfile*"
)
# The text benchmarks: name, izwi-make-checkpoint arch and preset, izwi-bench and baseline arguments.
TEXT_BENCHES=(
  "llama-3.2-1b llama --concurrency 1,16,128 --prompt-len 128 --gen 128 --shared-prefix 1024 --prefill-len 4096"
  "qwen3-0.6b qwen3 --concurrency 1,64 --prompt-len 128 --gen 64 --shared-prefix 0 --prefill-len 0"
  "lfm2-1.2b lfm2 --concurrency 1,64 --prompt-len 128 --gen 64 --shared-prefix 0 --prefill-len 0"
)
# The speech benchmarks, run with --device cuda once they take it: binary and arguments.
SPEECH_BENCHES=(
  "izwi-tts-bench --model $root/tests/data/qwen3-tts-tiny --concurrency 1,4 --frames 16"
  "izwi-asr-bench --model $root/tests/data/voxtral-realtime-tiny --streams 1,4 --seconds 2"
  "izwi-audio-chat-bench --model $root/tests/data/lfm2-audio-tiny --concurrency 1,4"
)

log() { echo "[$(($(date +%s) - start))s] $*" | tee -a "$out/steps.log"; }

# box SECONDS NAME COMMAND...: COMMAND's output into $logs/NAME.log, within SECONDS or what is left
# of the budget (20 s kept for the summary); its exit status (124: timed out, skipped: no time)
# into status.tsv.
box() {
  local want=$1 name=$2
  shift 2
  local left=$((deadline - $(date +%s) - 20))
  ((want > left)) && want=$left
  if ((want < 5)); then
    printf '%s\tskipped\t0\n' "$name" >>"$logs/status.tsv"
    log "$name: skipped, no time left"
    return 99
  fi
  local begin=$(date +%s)
  timeout -k 5 "$want" "$@" >"$logs/$name.log" 2>&1
  local status=$?
  printf '%s\t%s\t%s\n' "$name" "$status" "$(($(date +%s) - begin))" >>"$logs/status.tsv"
  log "$name: exit $status after $(($(date +%s) - begin)) s"
  return $status
}

finish() {
  log "summary"
  python3 "$root/scripts/gpu_check_summary.py" --logs "$logs" --out "$out" >"$logs/summary.log" 2>&1 ||
    log "the summary failed: $(tail -3 "$logs/summary.log")"
  cat "$out/summary.txt" 2>/dev/null
  tar -czf "$out/logs.tar.gz" -C "$work" logs
  rm -rf "$work"
  log "done"
  grep -q '"all_passed": true' "$out/summary.json" 2>/dev/null
}

# The machine: GPU, driver, tools, torch and transformers; the commit being checked.
{
  echo "commit ${IZWI_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}"
  nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader
  for tool in nvcc g++ cmake ninja python3 compute-sanitizer; do echo "$tool: $(command -v "$tool" || echo missing)"; done
  nvcc --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  python3 -c 'import transformers; print("transformers", transformers.__version__)' 2>&1 | tail -1
} >"$logs/machine.log" 2>&1
cat "$logs/machine.log" >>"$out/steps.log"
export PATH="$PATH:/usr/local/cuda/bin"

# 1. Build for this GPU's architecture only (torch's TORCH_CUDA_ARCH_LIST follows it).
arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
[[ "$arch" =~ ^[0-9]+$ ]] || arch="80;90"
export DEVICE_BUILD_TARGETS="izwi_cuda_tests izwi_parity_tests izwi_integration_tests izwi-bench izwi-make-checkpoint
  izwi-tts-bench izwi-asr-bench izwi-audio-chat-bench"
if ! box 300 build bash "$root/scripts/device_build.sh" "$build" -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DIZWI_BUILD_EXAMPLES=OFF -DIZWI_SANITIZED_PARSERS=OFF; then
  grep -m20 -B2 -A6 'error' "$logs/build.log" | cut -c1-400 >>"$out/steps.log"
fi
export LD_LIBRARY_PATH="$root/.device-prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
tests="$build/tests"
bin="$build/benchmarks"

# The text checkpoints, random bf16 weights, made on the CPU while the GPU runs the suites.
(for bench in "${TEXT_BENCHES[@]}"; do
  read -r name arch_name _ <<<"$bench"
  [ -x "$bin/izwi-make-checkpoint" ] &&
    "$bin/izwi-make-checkpoint" --arch "$arch_name" --preset "$name" --dtype bf16 --out "$models/$name"
done) >"$logs/checkpoints.log" 2>&1 &

# 2 and 3. The correctness checks side by side (each is small beside the GPU).
[ -x "$tests/izwi_cuda_tests" ] &&
  box 120 cuda_tests "$tests/izwi_cuda_tests" --gtest_output="xml:$logs/cuda_tests.xml" &
if [ -x "$tests/izwi_cuda_tests" ] && command -v compute-sanitizer >/dev/null; then
  box 200 memcheck compute-sanitizer --tool memcheck --error-exitcode 3 "$tests/izwi_cuda_tests" &
fi
for suite in "${GPU_SUITES[@]}"; do
  read -r name binary filter <<<"$suite"
  [ -x "$tests/$binary" ] && IZWI_TEST_DEVICE=cuda box 200 "$name" "$tests/$binary" --gtest_filter="$filter" \
    --gtest_output="xml:$logs/$name.xml" &
done
wait

# 4 and 5. The benchmarks, one at a time on the GPU, each beside transformers on the same work.
baseline=0
python3 -c 'import transformers' 2>/dev/null && baseline=1
for bench in "${TEXT_BENCHES[@]}"; do
  read -r name _ bench_args <<<"$bench"
  [ -d "$models/$name" ] || continue
  # shellcheck disable=SC2086 # the arguments are words
  box 120 "bench_$name" "$bin/izwi-bench" --model "$models/$name" --device cuda --dtype bfloat16 $bench_args --json
  if [ "$baseline" = 1 ]; then
    read -r concurrency prompt gen prefill <<<"$(echo "$bench_args" |
      sed -E 's/.*--concurrency ([^ ]+).*--prompt-len ([^ ]+).*--gen ([^ ]+).*--prefill-len ([^ ]+).*/\1 \2 \3 \4/')"
    box 150 "transformers_$name" python3 "$root/scripts/transformers_baseline.py" --model "$models/$name" \
      --concurrency "$concurrency" --prompt-len "$prompt" --gen "$gen" --prefill-len "$prefill"
  fi
done
for bench in "${SPEECH_BENCHES[@]}"; do
  read -r binary bench_args <<<"$bench"
  [ -x "$bin/$binary" ] || continue
  if "$bin/$binary" --help 2>&1 | grep -q -- '--device'; then
    # shellcheck disable=SC2086
    box 90 "speech_$binary" "$bin/$binary" $bench_args --device cuda --json
  else
    printf '%s\tno --device\t0\n' "speech_$binary" >>"$logs/status.tsv"
    log "speech_$binary: takes no --device yet, not run"
  fi
done

finish
