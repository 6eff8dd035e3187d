#include "common/speech_model_folders.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "common/reference.h"
#include "tokenizer/byte_level.h"

namespace izwi::testing {

namespace {

void write_json(const std::string& path, const nlohmann::json& json) { std::ofstream(path) << json.dump(); }

}  // namespace

std::string write_voxtral_with_tokenizer(const std::string& dir) {
  const std::string fixture = fixture_dir("voxtral-realtime-tiny");
  for (const char* file : {"config.json", "generation_config.json", "model.safetensors"}) {
    std::filesystem::copy_file(fixture + "/" + file, dir + "/" + file,
                               std::filesystem::copy_options::overwrite_existing);
  }
  constexpr int kSpecial = 40;
  nlohmann::json special = nlohmann::json::array();
  for (int i = 0; i < kSpecial; ++i) {
    const std::string name = i == 0                 ? "<unk>"
                             : i == 1               ? "<s>"
                             : i == 2               ? "</s>"
                             : i == kStreamingPadId ? "[STREAMING_PAD]"
                                                    : fmt::format("<SPECIAL_{}>", i);
    special.push_back({{"rank", i}, {"token_str", name}, {"is_control", true}});
  }
  nlohmann::json vocab = nlohmann::json::array();
  for (int b = 0; b < 256; ++b) vocab.push_back({{"rank", b}, {"token_bytes", base64_encode(std::string(1, char(b)))}});
  write_json(dir + "/tekken.json", {{"config",
                                     {{"pattern", "\\s+|\\S+"},
                                      {"num_vocab_tokens", 256},
                                      {"default_vocab_size", 256 + kSpecial},
                                      {"default_num_special_tokens", kSpecial},
                                      {"version", "v7"}}},
                                    {"vocab", vocab},
                                    {"special_tokens", special}});
  return dir;
}

std::string write_qwen3_tts_with_tokenizer(const std::string& dir) {
  std::filesystem::copy(fixture_dir("qwen3-tts-tiny"), dir,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level::encode(std::string(1, static_cast<char>(b)))] = b;
  nlohmann::json added = nlohmann::json::array();
  for (const auto& [id, content] : {std::pair{590, "<|im_start|>"}, std::pair{591, "<|im_end|>"}}) {
    added.push_back({{"id", id},
                     {"content", content},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  write_json(dir + "/tokenizer.json",
             {{"version", "1.0"},
              {"added_tokens", added},
              {"normalizer", nullptr},
              {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
              {"post_processor", nullptr},
              {"decoder", {{"type", "ByteLevel"}}},
              {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}}});
  return dir;
}

}  // namespace izwi::testing
