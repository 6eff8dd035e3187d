#!/usr/bin/env bash
# Everything izwi checks on a GPU, in one call on a bare CUDA machine: nvcc, cmake, g++ and python3
# with a CUDA torch, no package archive, the .deb files of cmake/device_deps.sh in .device-deps/.
#
#   scripts/gpu_check.sh OUT_DIR [BUDGET_SECONDS]     (default 480: 8 minutes in all)
#
# In order of importance, each step time-boxed (the budget rarely covers them all):
# 1. unpacks the .debs, configures against the machine's torch for its GPU's architecture, builds
#    the targets the checks need with every core (scripts/device_build.sh); then writes the random
#    bf16 checkpoints at the released shapes in the background, in the order the benches need
#    (izwi-make-checkpoint: about 19 GB of disk and 140 s on a 2-core development VM, 136-175 MB/s;
#    the voxtral 4B alone 8.6 GB, about 60 s and 10 GB of memory);
# 2. runs the CUDA kernel tests and
# 3. the suites that move models to the GPU (IZWI_TEST_DEVICE=cuda; GPU_SUITES below: text, engine
#    and speech parity), side by side;
# 4. the text targets of the GPU text-speed issue: izwi-bench on the llama-3.2-1b shape (batch 1
#    against the roofline, 16 and 128 requests), an FP8 llama-3.2-1b at 1 and 128 requests (its
#    tokens/s over the bf16 run's: issue 40's Hopper FP8 ratio, read off the two benches' figures),
#    llama-3.2-1b's 4,096-token prompt and cached 1,024-token prefix, 256 requests of 512 prompt /
#    256 generated tokens, qwen3-0.6b and lfm2-1.2b at batch 1;
# 5. the speech targets of the speech-on-the-GPU issue: izwi-tts-bench (Qwen3-TTS 0.6B),
#    izwi-asr-bench (Voxtral Realtime 4B), izwi-audio-chat-bench (LFM2-Audio 1.5B), bf16;
# 6. compute-sanitizer memcheck over the kernel tests (clean on the last GPU run, and the kernels'
#    logic is checked under AddressSanitizer in the CUDA emulator: after the figures);
# 7. the llama text work in transformers (scripts/transformers_baseline.py) when it imports;
# 8. writes OUT_DIR/summary.json (commit, GPU, each step's exit status and time, each suite's
#    counts, each benchmark's figures, every target of issues 38 and 39 and issue 40's FP8 ratio
#    with its measured value),
#    OUT_DIR/summary.txt (the same as tables), OUT_DIR/steps.log (what ran, when, with which exit
#    status) and OUT_DIR/logs.tar.gz (every step's output): four files.
# A step with no time left is skipped and says so (in steps.log, and as "skipped" in the summary's
# targets). Exit status 0 when every check ran and passed, 1 otherwise (the benchmarks' figures
# and targets are reported, not judged).
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

# The suites that run models on the GPU with IZWI_TEST_DEVICE=cuda: name, binary and gtest filter.
GPU_SUITES=(
  "text_parity izwi_parity_tests *TextModelParity*"
  "engine_parity izwi_integration_tests *EngineParity*:*EngineOpProfile*"
  "tts_parity izwi_parity_tests *Qwen3Tts*:*CodecParity*:*SpeakerEncoderParity*:*WarmCodecStates*"
  "voxtral_parity izwi_parity_tests *Voxtral*"
  "lfm2_audio_parity izwi_parity_tests *Lfm2Audio*:*Mimi*:*LogMel*"
  "engine_speech izwi_integration_tests *EngineSpeech*:*EngineTranscription*:*EngineAudioChat*:*EngineVoice*"
)
# The random checkpoints, in the order the benches use them: folder name, arch, preset and
# izwi-make-checkpoint's --dtype (bf16 unless given; fp8: the linear layers in FP8, issue 40).
CHECKPOINTS=(
  "llama-3.2-1b llama llama-3.2-1b"
  "llama-3.2-1b-fp8 llama llama-3.2-1b fp8"
  "qwen3-0.6b qwen3 qwen3-0.6b"
  "lfm2-1.2b lfm2 lfm2-1.2b"
  "qwen3-tts-0.6b qwen3_tts qwen3-tts-0.6b"
  "lfm2-audio-1.5b lfm2_audio lfm2-audio-1.5b"
  "voxtral-realtime-4b voxtral_realtime voxtral-mini-4b-realtime"
)
# The text benchmarks, most wanted first: step name (gpu_check_summary.py reads the targets off
# these names), checkpoint and izwi-bench arguments. izwi-bench reports once, at its end, so a run is
# kept short enough that a timeout loses little. The prefill run's step budget takes the 4,096-token
# prompt in one step, as transformers' baseline does (a GPU serving budget; the engine's default is 512).
TEXT_BENCHES=(
  "llama-3.2-1b llama-3.2-1b --concurrency 1,16,128 --prompt-len 128 --gen 128 --shared-prefix 0 --prefill-len 0"
  "llama-3.2-1b-fp8 llama-3.2-1b-fp8 --concurrency 1,128 --prompt-len 128 --gen 128 --shared-prefix 0 --prefill-len 0"
  "llama-3.2-1b-prefill llama-3.2-1b --concurrency 1 --prompt-len 128 --gen 16 --shared-prefix 1024 --prefill-len 4096 --max-tokens-per-step 4096"
  "llama-3.2-1b-256 llama-3.2-1b --concurrency 256 --prompt-len 512 --gen 256 --shared-prefix 0 --prefill-len 0"
  "qwen3-0.6b qwen3-0.6b --concurrency 1 --prompt-len 128 --gen 128 --shared-prefix 0 --prefill-len 0"
  "lfm2-1.2b lfm2-1.2b --concurrency 1 --prompt-len 128 --gen 128 --shared-prefix 0 --prefill-len 0"
)
# The speech benchmarks: step name (= checkpoint), binary and arguments; each level up to the
# issue's target count of streams.
SPEECH_BENCHES=(
  "qwen3-tts-0.6b izwi-tts-bench --concurrency 1,16,64 --frames 48 --no-codec-split"
  "voxtral-realtime-4b izwi-asr-bench --streams 1,32,100 --seconds 5"
  "lfm2-audio-1.5b izwi-audio-chat-bench --concurrency 1,8,32"
)
# transformers runs the text work of these text benches (the same config.json and lengths).
BASELINES=("llama-3.2-1b-prefill" "llama-3.2-1b")
# The kernel tests memcheck runs: all but those that run whole engines (minutes under the tool).
MEMCHECK_FILTER="-FrameChainGraphsCuda.*:QuantizedLinearCuda.AnInt4EngineGeneratesOnTheDevice"

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
  local begin
  begin=$(date +%s)
  timeout -k 5 "$want" "$@" >"$logs/$name.log" 2>&1
  local status=$?
  printf '%s\t%s\t%s\n' "$name" "$status" "$(($(date +%s) - begin))" >>"$logs/status.tsv"
  log "$name: exit $status after $(($(date +%s) - begin)) s"
  return $status
}

# The summary and logs as they stand, after each step: a run the device tool stops before the
# end (its own time limit) still returns what was measured.
snapshot() {
  python3 "$root/scripts/gpu_check_summary.py" --logs "$logs" --out "$out" >/dev/null 2>&1
  tar -czf "$out/logs.tar.gz" -C "$work" logs 2>/dev/null
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

export PATH="$PATH:/usr/local/cuda/bin"
# torch's own CUDA libraries (its nvidia-* packages) first on the library path: where torch's CUDA
# major version is the toolkit's, izwi's binaries then load the cuBLASLt and CUDA runtime torch
# loads. torch's libcublas needs the cuBLASLt it was built with; the toolkit's, which izwi links,
# may be older (the same soname, fewer symbols). machine.log shows what the kernel tests load.
torch_cuda_libs="$(python3 -c 'import glob, os, torch
site = os.path.dirname(os.path.dirname(torch.__file__))
print(":".join(sorted({os.path.dirname(p) for p in glob.glob(os.path.join(site, "nvidia", "*", "lib", "lib*.so*"))})))' \
  2>/dev/null)"
[ -n "$torch_cuda_libs" ] && export LD_LIBRARY_PATH="$torch_cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The machine: GPU, driver, tools, torch and transformers; the commit being checked.
{
  echo "commit ${IZWI_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}"
  nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader
  for tool in nvcc g++ cmake ninja python3 compute-sanitizer; do echo "$tool: $(command -v "$tool" || echo missing)"; done
  nvcc --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  python3 -c 'import transformers; print("transformers", transformers.__version__)' 2>&1 | tail -1
  python3 -c 'import torch; print("torch C++ ABI", int(torch._C._GLIBCXX_USE_CXX11_ABI))'
  echo "torch CUDA libraries: ${torch_cuda_libs:-none found}"
} >"$logs/machine.log" 2>&1
cat "$logs/machine.log" >>"$out/steps.log"

# 1. Build for this GPU's architecture only (torch's TORCH_CUDA_ARCH_LIST follows it).
arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
[[ "$arch" =~ ^[0-9]+$ ]] || arch="80;90"
export DEVICE_BUILD_TARGETS="izwi_cuda_tests izwi_parity_tests izwi_integration_tests izwi-bench izwi-make-checkpoint
  izwi-tts-bench izwi-asr-bench izwi-audio-chat-bench"
# Tests are listed when ctest runs them, not by running each binary as its last build step.
if ! box 300 build bash "$root/scripts/device_build.sh" "$build" -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DIZWI_BUILD_EXAMPLES=OFF -DIZWI_SANITIZED_PARSERS=OFF -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST; then
  grep -m20 -B2 -A6 'error' "$logs/build.log" | cut -c1-400 >>"$out/steps.log"
fi
export LD_LIBRARY_PATH="$root/.device-prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
tests="$build/tests"
bin="$build/benchmarks"
# Which CUDA runtime and cuBLASLt the kernel tests load.
[ -x "$tests/izwi_cuda_tests" ] && ldd "$tests/izwi_cuda_tests" | grep -E 'cublas|cudart' >>"$logs/machine.log"

# The checkpoints, random weights, written on the CPU while the GPU runs the suites; each
# folder appears (renamed from .partial) once complete.
# Niced and on a few threads: the benches' host side (a batch-1 decode step is host-bound) runs beside
# it. Each checkpoint within what is left of the budget, so stopping the writer waits for nothing.
(for checkpoint in "${CHECKPOINTS[@]}"; do
  read -r name arch_name preset dtype <<<"$checkpoint"
  if [ ! -x "$bin/izwi-make-checkpoint" ] || [ -e "$work/stop" ]; then break; fi
  left=$((deadline - $(date +%s) - 25))
  ((left > 5)) || break
  begin=$(date +%s)
  OMP_NUM_THREADS=4 timeout "$left" nice -n 10 "$bin/izwi-make-checkpoint" --arch "$arch_name" --preset "$preset" \
    --dtype "${dtype:-bf16}" --out "$models/$name.partial" &&
    mv "$models/$name.partial" "$models/$name" && echo "$name: $(($(date +%s) - begin)) s"
done) >"$logs/checkpoints.log" 2>&1 &
writer=$!

# ready NAME: waits for checkpoint NAME while its writer runs and the budget lasts; false (with a
# status line) without it.
ready() {
  while [ ! -d "$models/$1" ] && kill -0 "$writer" 2>/dev/null && (($(date +%s) < deadline - 25)); do sleep 1; done
  [ -d "$models/$1" ] && return 0
  printf '%s\tno checkpoint\t0\n' "$2" >>"$logs/status.tsv"
  log "$2: no checkpoint $1 (see checkpoints.log), not run"
  return 1
}

# 2 and 3. The correctness checks side by side (each is small beside the GPU; two threads each on the host).
[ -x "$tests/izwi_cuda_tests" ] &&
  OMP_NUM_THREADS=2 box 120 cuda_tests "$tests/izwi_cuda_tests" --gtest_output="xml:$logs/cuda_tests.xml" &
for suite in "${GPU_SUITES[@]}"; do
  read -r name binary filter <<<"$suite"
  echo "$name" >>"$logs/expected_suites.txt"
  [ -x "$tests/$binary" ] && IZWI_TEST_DEVICE=cuda OMP_NUM_THREADS=2 box 120 "$name" "$tests/$binary" \
    --gtest_filter="$filter" --gtest_output="xml:$logs/$name.xml" &
done
wait_suites() { for job in $(jobs -p); do [ "$job" = "$writer" ] || wait "$job"; done; }
wait_suites
snapshot

# 4. The text targets, one bench at a time on the GPU.
for bench in "${TEXT_BENCHES[@]}"; do
  read -r name checkpoint bench_args <<<"$bench"
  if [ ! -x "$bin/izwi-bench" ] || ! ready "$checkpoint" "bench_$name"; then continue; fi
  # shellcheck disable=SC2086 # the arguments are words
  box 120 "bench_$name" "$bin/izwi-bench" --model "$models/$checkpoint" --device cuda --dtype bfloat16 $bench_args --json
  snapshot
done

# 5. The speech targets.
for bench in "${SPEECH_BENCHES[@]}"; do
  read -r name binary bench_args <<<"$bench"
  if [ ! -x "$bin/$binary" ] || ! ready "$name" "speech_$name"; then continue; fi
  # shellcheck disable=SC2086
  box 120 "speech_$name" "$bin/$binary" --model "$models/$name" --device cuda --dtype bfloat16 $bench_args --json
  snapshot
done

# 6. memcheck over the kernel tests.
if [ -x "$tests/izwi_cuda_tests" ] && command -v compute-sanitizer >/dev/null; then
  box 90 memcheck compute-sanitizer --tool memcheck --error-exitcode 3 "$tests/izwi_cuda_tests" \
    --gtest_filter="$MEMCHECK_FILTER"
fi

# 7. transformers on the same text work, when it imports.
if python3 -c 'import transformers' 2>/dev/null; then
  for name in "${BASELINES[@]}"; do
    for bench in "${TEXT_BENCHES[@]}"; do
      read -r bench_name checkpoint bench_args <<<"$bench"
      if [ "$bench_name" != "$name" ] || [ ! -d "$models/$checkpoint" ]; then continue; fi
      read -r concurrency prompt gen prefill <<<"$(echo "$bench_args" |
        sed -E 's/.*--concurrency ([^ ]+).*--prompt-len ([^ ]+).*--gen ([^ ]+).*--prefill-len ([^ ]+).*/\1 \2 \3 \4/')"
      box 150 "transformers_$name" python3 "$root/scripts/transformers_baseline.py" --model "$models/$checkpoint" \
        --concurrency "$concurrency" --prompt-len "$prompt" --gen "$gen" --prefill-len "$prefill"
    done
  done
fi

# A writer still running (the budget ran out) stops after its current checkpoint, which its
# timeout ends by the deadline at the latest.
touch "$work/stop"
command -v pkill >/dev/null && pkill -P "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
finish
