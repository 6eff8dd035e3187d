#include "codec/codec_checkpoint.h"

#include <filesystem>
#include <vector>

#include "codec/mimi_names.h"
#include "common/check.h"
#include "common/json_fields.h"
#include "kernels/backend.h"

namespace izwi {

namespace fs = std::filesystem;

std::string moshi_tokenizer_file(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("tokenizer-", 0) == 0 && entry.path().extension() == ".safetensors") {
      found.push_back(entry.path().string());
    }
  }
  if (found.size() > 1) {
    fail(ErrorCode::InvalidFormat, "'{}' holds {} tokenizer-*.safetensors codec files; keep one", dir, found.size());
  }
  return found.empty() ? std::string() : found[0];
}

CodecCheckpoint find_codec_checkpoint(const std::string& path) {
  CodecCheckpoint found;
  if (fs::is_regular_file(path)) {
    if (fs::path(path).extension() != ".safetensors") {
      fail(ErrorCode::InvalidArgument, "codec '{}' is a file but not a .safetensors checkpoint", path);
    }
    found.weights_path = path;
    return found;
  }
  if (!fs::is_directory(path)) fail(ErrorCode::NotFound, "codec folder '{}' does not exist", path);
  fs::path folder(path);
  // A Qwen3-TTS model folder keeps its codec in speech_tokenizer/.
  if (fs::exists(folder / "speech_tokenizer" / "config.json")) folder /= "speech_tokenizer";
  const fs::path config_path = folder / "config.json";
  if (!fs::exists(config_path)) {
    const std::string moshi = moshi_tokenizer_file(folder.string());
    if (moshi.empty()) fail(ErrorCode::NotFound, "codec folder '{}' has no config.json", folder.string());
    found.weights_path = moshi;
    return found;
  }
  found.config_path = config_path.string();
  found.config = read_json_file(found.config_path);
  if (!found.config.is_object()) fail(ErrorCode::InvalidFormat, "{}: expected a JSON object", found.config_path);
  const JsonFields top(found.config, found.config_path);
  found.weights_path = folder.string();
  if (top.object("decoder_config")) {
    found.kind = CodecCheckpoint::Kind::kQwen3TtsTokenizer;
  } else if (top.has("upsample_rates")) {
    found.kind = CodecCheckpoint::Kind::kQwen3TtsDecoder;
  } else if (top.get_or<std::string>("model_type", "") == "mimi") {
    found.kind = CodecCheckpoint::Kind::kMimi;
  } else if (const std::string moshi = moshi_tokenizer_file(folder.string()); !moshi.empty()) {
    // A model folder (LFM2-Audio) whose config.json is the model's: the codec is Kyutai's Mimi.
    found = CodecCheckpoint{};
    found.weights_path = moshi;
  } else {
    fail(ErrorCode::Unsupported,
         "{}: not a codec config (no 'decoder_config', 'upsample_rates' or model_type 'mimi') and no "
         "tokenizer-*.safetensors beside it",
         found.config_path);
  }
  return found;
}

std::unique_ptr<WeightLoader> open_codec_weights(const CodecCheckpoint& checkpoint, const Backend& backend,
                                                 bool check_finite) {
  auto weights =
      std::make_unique<WeightLoader>(checkpoint.weights_path, backend.dtype(), backend.dtype(), backend.device());
  weights->set_backend(backend);
  weights->set_check_finite(check_finite);
  if (checkpoint.kind == CodecCheckpoint::Kind::kMimi) {
    // Idempotent on transformers' names, so either naming loads.
    weights->rename(moshi_to_transformers_mimi_name);
  } else {
    // Only the quantizer uses moshi's names there ("pre_conv.conv" must stay as it is).
    weights->rename([](const std::string& name) {
      return name.find("quantizer.") != std::string::npos ? moshi_to_transformers_mimi_name(name) : name;
    });
  }
  return weights;
}

MimiConfig mimi_config_of(const CodecCheckpoint& checkpoint) {
  if (checkpoint.config.is_null()) return MimiConfig{};
  return MimiConfig::parse(JsonFields(checkpoint.config, checkpoint.config_path));
}

}  // namespace izwi
