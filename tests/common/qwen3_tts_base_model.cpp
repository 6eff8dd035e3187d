#include "common/qwen3_tts_base_model.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "bench_support/random_weights.h"
#include "bench_support/safetensors_writer.h"
#include "codec/mimi_config.h"
#include "codec/mimi_encoder.h"
#include "common/json_fields.h"
#include "common/reference.h"
#include "io/safetensors.h"
#include "io/safetensors_tensor.h"

namespace izwi::testing {

namespace {

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(std::ifstream(path)); }

void write_speech_tokenizer_with_encoder(const std::string& decoder_dir, const std::string& out_dir) {
  nlohmann::json encoder_config = read_json(fixture_dir("mimi-tiny") + "/config.json");
  encoder_config["codebook_size"] = 2048;
  encoder_config["num_quantizers"] = 16;
  const nlohmann::json config = {{"model_type", "qwen3_tts_tokenizer_12hz"},
                                 {"decoder_config", read_json(decoder_dir + "/config.json")},
                                 {"encoder_config", encoder_config},
                                 {"encoder_valid_num_quantizers", 16},
                                 {"input_sample_rate", 24000},
                                 {"output_sample_rate", 24000},
                                 {"encode_downsample_rate", 1920},
                                 {"decode_upsample_rate", 1920}};
  std::filesystem::create_directories(out_dir);
  std::ofstream(out_dir + "/config.json") << config.dump();
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  const SafetensorsFile decoder(decoder_dir + "/model.safetensors");
  for (const StTensorInfo& info : decoder.tensors())
    tensors.emplace_back("decoder." + info.name, read_tensor(decoder, info));
  RandomWeights random(20261124, at::kCPU);
  const MimiEncoder recorded(random, MimiConfig::parse(JsonFields(encoder_config, "encoder_config")), "encoder.", 16);
  (void)recorded;
  tensors.insert(tensors.end(), random.tensors().begin(), random.tensors().end());
  write_safetensors(out_dir + "/model.safetensors", tensors, at::kFloat);
}

}  // namespace

std::string make_qwen3_tts_base_model(const TempDir& dir, bool codec_encoder) {
  const std::string talker = fixture_dir("qwen3-tts-tiny"), encoder = fixture_dir("qwen3-tts-speaker-encoder-tiny");
  if (codec_encoder) {
    write_speech_tokenizer_with_encoder(talker + "/speech_tokenizer", dir.file("speech_tokenizer"));
  } else {
    std::filesystem::copy(talker + "/speech_tokenizer", dir.file("speech_tokenizer"));
  }
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
