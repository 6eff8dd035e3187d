#pragma once
// What every engine tool does between parsing its command line and its request: the EngineConfig
// the shared options ask for, and the engine loaded and checked to be the kind of model the tool
// serves (a speech model given to izwi-generate is named as such, with the tool that serves it).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/shared_options.h"
#include "izwi/config.h"
#include "izwi/engine.h"

namespace izwi::cli {

/// The kinds of model the engine tools serve.
enum class ModelUse {
  Text,           ///< izwi-generate, izwi-chat: text models (and audio chat models' text).
  Speech,         ///< izwi-speak: text-to-speech models.
  Transcription,  ///< izwi-transcribe, izwi-stream-transcribe: speech recognition models.
  AudioChat,      ///< izwi-audio-chat.
};

/// KV positions of a request's template (role markers, speaker and language tags, BOS, the
/// streaming delay of a transcription) beyond its text, audio and output, for the one-request pools.
constexpr int64_t kTemplatePositions = 32;
/// KV positions of an interactive conversation before its reply (izwi-chat): llama.cpp's default
/// context. Longer conversations fail naming --kv-blocks.
constexpr int64_t kConversationPositions = 4096;

/// KV positions of `seconds` of audio: every audio model izwi serves takes one position per 80 ms
/// (Qwen3-TTS codec frames, the Voxtral Realtime and LFM2-Audio encoders' outputs).
int64_t audio_positions(double seconds);

/// KV positions of a text before the tokenizer is loaded: at most one token per byte.
inline int64_t text_positions(const std::string& text) { return static_cast<int64_t>(text.size()); }

/// The device, dtype, weight dtype, thread and log-level options given, over `config`'s.
void apply_shared_engine_options(const SharedOptions& options, EngineConfig& config);

/// --config's file (else the defaults), then the flags over it and -v / -q's log level. A
/// command line serves one run, so unless --kv-blocks or --config sizes the KV pool, the pool holds
/// just `request_positions` (prompt + output positions of each request that runs at once), when
/// the tool knows them, instead of a server's (EngineConfig::num_kv_blocks).
EngineConfig engine_config(const SharedOptions& options, const std::vector<int64_t>& request_positions = {});

/// Throws Unsupported when `info` is not a model for `use`, saying what the folder is and which
/// tool (and izwi-server route) serves it: "'qwen3-tts-tiny' is a text-to-speech model: use
/// izwi-speak (or /v1/audio/speech)".
void require_model_use(const ModelInfo& info, const std::string& model_dir, ModelUse use);

/// Loads --model with `config` (showing a progress bar while the weights load when stderr is a
/// terminal and --json is not given) and checks it with require_model_use.
std::unique_ptr<Engine> load_engine(const SharedOptions& options, EngineConfig config, ModelUse use);

}  // namespace izwi::cli
