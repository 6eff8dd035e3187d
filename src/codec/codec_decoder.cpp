#include "codec/codec_decoder.h"

#include <filesystem>

#include "codec/qwen3_tts_codec_decoder.h"
#include "common/check.h"
#include "common/json_fields.h"
#include "io/weight_loader.h"

namespace izwi {

namespace {

namespace fs = std::filesystem;

/// Builds the decoder from the checkpoint in `dir`: tensors under `prefix`, those under
/// `skip_prefix` (the encoder's) ignored, any other one reported by finish().
std::unique_ptr<CodecDecoder> load_qwen3_tts_decoder(const std::string& dir, const Qwen3TtsCodecConfig& config,
                                                     const std::string& prefix, const std::string& skip_prefix,
                                                     at::ScalarType dtype, const at::Device& device,
                                                     bool check_finite) {
  WeightLoader weights(dir, dtype, dtype, device);
  weights.set_check_finite(check_finite);
  if (!skip_prefix.empty()) weights.skip_prefix(skip_prefix);
  auto decoder = std::make_unique<Qwen3TtsCodecDecoder>(weights, config, prefix);
  weights.finish();
  return decoder;
}

}  // namespace

std::unique_ptr<CodecDecoder> load_codec_decoder(const std::string& dir, at::ScalarType dtype, const at::Device& device,
                                                 bool check_finite) {
  if (!fs::is_directory(dir)) fail(ErrorCode::NotFound, "codec folder '{}' does not exist", dir);
  fs::path folder(dir);
  // A Qwen3-TTS model folder keeps its codec in speech_tokenizer/.
  if (fs::exists(folder / "speech_tokenizer" / "config.json")) {
    folder /= "speech_tokenizer";
  }
  const std::string config_path = (folder / "config.json").string();
  const nlohmann::json json = read_json_file(config_path);
  if (!json.is_object()) fail(ErrorCode::InvalidFormat, "{}: expected a JSON object", config_path);
  const JsonFields top(json, config_path);
  if (const std::optional<JsonFields> nested = top.object("decoder_config")) {
    // The released speech_tokenizer folder: decoder.* tensors, encoder.* (unused here) skipped.
    const Qwen3TtsCodecConfig config = Qwen3TtsCodecConfig::parse(*nested, &top);
    return load_qwen3_tts_decoder(folder.string(), config, "decoder.", "encoder.", dtype, device, check_finite);
  }
  if (!top.has("upsample_rates")) {
    fail(ErrorCode::Unsupported, "{}: not a codec config (neither 'decoder_config' nor 'upsample_rates')", config_path);
  }
  const Qwen3TtsCodecConfig config = Qwen3TtsCodecConfig::parse(top, nullptr);
  return load_qwen3_tts_decoder(folder.string(), config, "", "", dtype, device, check_finite);
}

}  // namespace izwi
