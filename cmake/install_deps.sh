#!/usr/bin/env bash
# Installs the Debian packages izwi builds against. Idempotent: only missing packages are installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libtorch-dev          # tensors and CPU/CUDA/MPS ops
  libopenblas0-pthread  # without it libtorch uses the reference BLAS (20x slower GEMM)
  libeigen3-dev         # CPU hot kernels
  libspdlog-dev libfmt-dev
  nlohmann-json3-dev    # config.json, safetensors headers, tokenizer.json
  libgtest-dev libgmock-dev libbenchmark-dev
  libpcre2-dev          # Unicode regex for tokenizer pre-tokenizers
  libutf8proc-dev       # Unicode normalisation (NFC, NFD, NFKC, NFKD) and character categories
  libsentencepiece-dev  # SentencePiece tokenizer.model folders without tokenizer.json
  libsndfile1-dev       # WAV/FLAC/OGG/MP3 decoding
  libsoxr-dev           # resampling
  libcli11-dev          # command lines of the example binaries
  clang-format          # the suite checks that every C++ file follows .clang-format
  ccache                # rebuilds reuse earlier compiles
  libcpp-httplib-dev    # izwi-server: HTTP/1.1 and server-sent events
  libzmq3-dev libmsgpack-cxx-dev  # izwi-server: KV events in vLLM's wire format
  python3-zmq python3-msgpack     # tests: the KV-events subscriber
  python3-jinja2                  # tests: reference renderings of chat templates (Jinja2, as transformers)
  python3-numpy                   # scripts/make_quantized_fixtures.py (the GPTQ / AWQ / FP8 fixtures)
  sox                             # tests: the WAV files the tools write read by another reader (sox --i)
  libwebsocketpp-dev libasio-dev  # izwi-server: the live-transcription WebSocket
  chromium              # tests: the playground page driven headless by puppeteer-core
  doxygen               # the API reference from include/izwi/ (target docs; a test fails on its warnings)
  curl                  # tests: a recent libtorch-dev the CUDA branches are also checked against
  libboost-context-dev  # tests: the CUDA emulator's fibers (a thread block's threads, tests/cuda_emu)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node and npm run the serving tests' real clients; a machine may have them from elsewhere.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install_deps: installing ${missing[*]}"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The tokenizer parity tests' reference: the Hugging Face tokenizers library (Rust) through its
# Node binding, pinned by tests/parity/tokenizers_js/package-lock.json.
tokenizers_js="$(dirname "$0")/../tests/parity/tokenizers_js"
if [ ! -d "$tokenizers_js/node_modules" ] || [ "$tokenizers_js/package-lock.json" -nt "$tokenizers_js/node_modules" ]; then
  npm ci --prefix "$tokenizers_js" --no-audit --no-fund
  touch "$tokenizers_js/node_modules"
fi

# The serving tests' npm clients (openai, puppeteer-core), pinned by tests/serving/package-lock.json.
serving="$(dirname "$0")/../tests/serving"
if [ ! -d "$serving/node_modules" ] || [ "$serving/package-lock.json" -nt "$serving/node_modules" ]; then
  npm ci --prefix "$serving" --no-audit --no-fund
  touch "$serving/node_modules"
fi
