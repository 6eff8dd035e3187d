#include "bench_support/random_checkpoint.h"

#include <filesystem>
#include <fstream>

#include "bench_support/checkpoint_presets.h"
#include "bench_support/random_weights.h"
#include "bench_support/safetensors_writer.h"
#include "codec/mimi_decoder.h"
#include "codec/mimi_encoder.h"
#include "codec/qwen3_tts_codec_decoder.h"
#include "common/check.h"
#include "common/json_fields.h"
#include "io/hf_config.h"
#include "models/model_registry.h"

namespace izwi {

namespace {

namespace fs = std::filesystem;

void write_json(const nlohmann::json& json, const fs::path& path) {
  std::ofstream out(path);
  out << json.dump(2) << "\n";
  if (!out) fail(ErrorCode::ResourceExhausted, "cannot write '{}'", path.string());
}

/// Writes `dir`/config.json (the released speech-tokenizer layout with a nested decoder_config,
/// and encoder_config for Base models) and `dir`/model.safetensors with the decoder's tensors
/// (`decoder.` names) and the encoder's (`encoder.`), float32 as released.
int64_t write_speech_tokenizer(const nlohmann::json& config, const fs::path& dir, uint64_t seed) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(ErrorCode::InvalidArgument, "cannot create '{}': {}", dir.string(), ec.message());
  write_json(config, dir / "config.json");
  const std::string origin = (dir / "config.json").string();
  const JsonFields top(config, origin);
  const std::optional<JsonFields> decoder = top.object("decoder_config");
  if (!decoder) fail(ErrorCode::InvalidArgument, "{}: the preset's speech tokenizer has no decoder_config", origin);
  RandomWeights weights(seed, at::kMeta, at::kFloat);
  const Qwen3TtsCodecDecoder recorded(weights, Qwen3TtsCodecConfig::parse(*decoder, &top), "decoder.");
  (void)recorded;
  if (const std::optional<JsonFields> encoder = top.object("encoder_config")) {
    const MimiEncoder recorded_encoder(weights, MimiConfig::parse(*encoder), "encoder.",
                                       top.get_or<int32_t>("encoder_valid_num_quantizers", 16));
    (void)recorded_encoder;
  }
  write_safetensors((dir / "model.safetensors").string(), weights.tensors(), at::kFloat);
  int64_t parameters = 0;
  for (const auto& [name, t] : weights.tensors()) parameters += t.numel();
  return parameters;
}

}  // namespace

RandomCheckpointInfo write_random_checkpoint(const nlohmann::json& config, const std::string& out_dir,
                                             at::ScalarType dtype, uint64_t seed) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) fail(ErrorCode::InvalidArgument, "cannot create '{}': {}", out_dir, ec.message());
  nlohmann::json stored = config;
  stored["dtype"] = dtype == at::kBFloat16 ? "bfloat16" : "float32";
  RandomCheckpointInfo info;
  if (stored.contains(kSpeechTokenizerKey)) {
    // Written first: the model loads its codec from the folder while it is built below.
    info.codec_parameters =
        write_speech_tokenizer(stored[kSpeechTokenizerKey], fs::path(out_dir) / "speech_tokenizer", seed ^ 0x5eedc0dec);
    stored.erase(kSpeechTokenizerKey);
  }
  write_json(stored, fs::path(out_dir) / "config.json");
  if (HfConfig::load(out_dir).model_type() == "lfm2_audio") {
    // Written before the model is built: it loads the folder's Mimi. Kyutai's sizes, decoder only.
    RandomWeights mimi(seed ^ 0x6d696d69, at::kMeta, dtype);
    const MimiDecoder recorded(mimi, MimiConfig{}, "", 8);
    (void)recorded;
    const std::string path = (fs::path(out_dir) / "tokenizer-random.safetensors").string();
    write_safetensors(path, mimi.tensors(), dtype);
    for (const auto& [name, t] : mimi.tensors()) info.codec_parameters += t.numel();
  }
  // Building the model on the meta device records every tensor it asks for without keeping a
  // second copy of the weights.
  RandomWeights weights(seed, at::kMeta, dtype);
  build_causal_lm(HfConfig::load(out_dir), weights);
  const std::string path = (fs::path(out_dir) / "model.safetensors").string();
  write_safetensors(path, weights.tensors(), dtype);
  for (const auto& [name, t] : weights.tensors()) info.parameters += t.numel();
  info.file_bytes = static_cast<int64_t>(fs::file_size(path));
  return info;
}

}  // namespace izwi
