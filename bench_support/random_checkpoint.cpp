#include "bench_support/random_checkpoint.h"

#include <filesystem>
#include <fstream>
#include <limits>

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
#include "quant/dequantize.h"

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

/// A linear layer's weight of a text model: 2-D, neither an embedding table nor the output head.
bool is_linear_weight(const std::string& name, const at::Tensor& t) {
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return t.dim() == 2 && ends_with(".weight") && name.find("embed") == std::string::npos &&
         name.rfind("lm_head", 0) != 0;
}

/// `w` [out, in] as e4m3fn bytes and one float32 scale per row: the byte nearest to w / scale,
/// scale = the row's max |w| / 448 (e4m3's largest finite value), as llm-compressor's per-channel
/// FP8 scheme stores it.
std::pair<at::Tensor, at::Tensor> to_e4m3(const at::Tensor& w) {
  const at::Tensor x = w.to(at::kFloat);
  const at::Tensor scale = (x.abs().amax(1, true) / 448.0f).clamp_min(std::numeric_limits<float>::min());
  const at::Tensor y = x / scale;
  const at::Tensor a = y.abs().clamp_max(448.0f).contiguous();
  const at::Tensor positive = e4m3_table().narrow(0, 0, 127);  // bytes 0x00-0x7e, increasing
  const at::Tensor above = at::searchsorted(positive, a).clamp_max(126);
  const at::Tensor below = (above - 1).clamp_min(0);
  const auto value = [&](const at::Tensor& byte) { return positive.index_select(0, byte.flatten()).view_as(a); };
  at::Tensor byte = at::where(a - value(below) <= value(above) - a, below, above);
  byte = byte + (y < 0).to(at::kLong) * 128;  // the sign bit
  return {byte.to(at::kByte), scale};
}

/// compressed-tensors' description of per-channel FP8 weights with dynamic per-token activations.
nlohmann::json fp8_quantization_config() {
  return {{"quant_method", "compressed-tensors"},
          {"format", "float-quantized"},
          {"quantization_status", "compressed"},
          {"ignore", {"lm_head"}},
          {"kv_cache_scheme", nullptr},
          {"config_groups",
           {{"group_0",
             {{"targets", {"Linear"}},
              {"weights",
               {{"num_bits", 8},
                {"type", "float"},
                {"strategy", "channel"},
                {"symmetric", true},
                {"dynamic", false},
                {"group_size", nullptr},
                {"block_structure", nullptr}}},
              {"input_activations",
               {{"num_bits", 8}, {"type", "float"}, {"strategy", "token"}, {"symmetric", true}, {"dynamic", true}}},
              {"output_activations", nullptr}}}}}};
}

RandomCheckpointInfo write_checkpoint(const nlohmann::json& config, const std::string& out_dir, at::ScalarType dtype,
                                      uint64_t seed, bool fp8_linears) {
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
  if (fp8_linears) {
    std::vector<SafetensorsEntry> entries;
    for (const auto& [name, t] : weights.tensors()) {
      if (!is_linear_weight(name, t)) {
        entries.push_back({name, t, dtype, "BF16"});
        continue;
      }
      auto [bytes, scale] = to_e4m3(t);
      entries.push_back({name, bytes, at::kByte, "F8_E4M3"});
      entries.push_back({name.substr(0, name.size() - 6) + "weight_scale", scale, at::kFloat, "F32"});
    }
    write_safetensors(path, entries);
    stored["quantization_config"] = fp8_quantization_config();
    write_json(stored, fs::path(out_dir) / "config.json");
  } else {
    write_safetensors(path, weights.tensors(), dtype);
  }
  for (const auto& [name, t] : weights.tensors()) info.parameters += t.numel();
  info.file_bytes = static_cast<int64_t>(fs::file_size(path));
  return info;
}

}  // namespace

RandomCheckpointInfo write_random_checkpoint(const nlohmann::json& config, const std::string& out_dir,
                                             at::ScalarType dtype, uint64_t seed) {
  return write_checkpoint(config, out_dir, dtype, seed, false);
}

RandomCheckpointInfo write_random_fp8_checkpoint(const nlohmann::json& config, const std::string& out_dir,
                                                 uint64_t seed) {
  const std::string type = config.value("model_type", "");
  if (type != "llama" && type != "qwen3" && type != "lfm2") {
    fail(ErrorCode::InvalidArgument, "FP8 checkpoints are written for the text models (llama, qwen3, lfm2), not '{}'",
         type);
  }
  return write_checkpoint(config, out_dir, at::kBFloat16, seed, true);
}

}  // namespace izwi
