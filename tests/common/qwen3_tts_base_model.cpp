#include "common/qwen3_tts_base_model.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "common/reference.h"
#include "io/safetensors.h"

namespace izwi::testing {

namespace {

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(std::ifstream(path)); }

}  // namespace

std::string make_qwen3_tts_base_model(const TempDir& dir) {
  const std::string talker = fixture_dir("qwen3-tts-tiny"), encoder = fixture_dir("qwen3-tts-speaker-encoder-tiny");
  std::filesystem::copy(talker + "/speech_tokenizer", dir.file("speech_tokenizer"));
  nlohmann::json config = read_json(talker + "/config.json");
  config["tts_model_type"] = "base";
  config["speaker_encoder_config"] = read_json(encoder + "/config.json").at("speaker_encoder_config");
  config["talker_config"]["spk_id"] = nlohmann::json::object();
  config["talker_config"]["spk_is_dialect"] = nlohmann::json::object();
  dir.write("config.json", config.dump());

  nlohmann::json weight_map = nlohmann::json::object();
  const std::vector<std::pair<std::string, std::string>> shards = {
      {talker + "/model.safetensors", "model-00001-of-00002.safetensors"},
      {encoder + "/model.safetensors", "model-00002-of-00002.safetensors"}};
  for (const auto& [from, name] : shards) {
    std::filesystem::copy_file(from, dir.file(name));
    const SafetensorsFile shard(from);
    for (const StTensorInfo& tensor : shard.tensors()) weight_map[tensor.name] = name;
  }
  dir.write("model.safetensors.index.json", nlohmann::json{{"metadata", {}}, {"weight_map", weight_map}}.dump());
  return dir.path();
}

std::vector<float> qwen3_tts_tiny_codec_embedding(int id) {
  const SafetensorsFile file(fixture_dir("qwen3-tts-tiny") + "/model.safetensors");
  const StTensorInfo* table = file.find("talker.model.codec_embedding.weight");
  if (table == nullptr || table->dtype != StDType::F32 || table->shape.size() != 2 || id < 0 || id >= table->shape[0]) {
    throw std::runtime_error("qwen3-tts-tiny: no float32 codec embedding row " + std::to_string(id));
  }
  std::vector<float> row(static_cast<size_t>(table->shape[1]));
  std::memcpy(row.data(), file.data(*table) + static_cast<size_t>(id) * row.size() * sizeof(float),
              row.size() * sizeof(float));
  return row;
}

}  // namespace izwi::testing
