#include "common/speech_model_folders.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench_support/random_weights.h"
#include "bench_support/safetensors_writer.h"
#include "codec/mimi_config.h"
#include "codec/mimi_decoder.h"
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

std::string write_lfm2_audio_with_tokenizer(const std::string& dir, bool codec) {
  for (const auto& entry : std::filesystem::directory_iterator(fixture_dir("lfm2-audio-tiny"))) {
    std::filesystem::copy_file(entry.path(), dir + "/" + entry.path().filename().string(),
                               std::filesystem::copy_options::overwrite_existing);
  }
  const std::vector<std::pair<int, std::string>> added = {
      {1, "<|startoftext|>"}, {6, "<|im_start|>"},     {7, "<|im_end|>"}, {10, "\n"},
      {300, "system\n"},      {301, kLfm2AudioSystem}, {302, "user"},     {303, "assistant"}};
  nlohmann::json vocab = nlohmann::json::object(), tokens = nlohmann::json::array();
  for (const auto& [id, content] : added) {
    tokens.push_back({{"id", id},
                      {"content", content},
                      {"single_word", false},
                      {"lstrip", false},
                      {"rstrip", false},
                      {"normalized", false},
                      {"special", content[0] == '<'}});
  }
  int next = 0;
  for (int b = 0; b < 256; ++b) {
    while (std::any_of(added.begin(), added.end(), [&](const auto& a) { return a.first == next; })) ++next;
    vocab[byte_level::encode(std::string(1, static_cast<char>(b)))] = next++;
  }
  write_json(dir + "/tokenizer.json",
             {{"version", "1.0"},
              {"added_tokens", tokens},
              {"normalizer", nullptr},
              {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
              {"post_processor", nullptr},
              {"decoder", {{"type", "ByteLevel"}}},
              {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}}});
  if (codec) {
    RandomWeights weights(11, at::kMeta, at::kBFloat16);
    const MimiDecoder recorded(weights, MimiConfig{}, "", 8);  // records the tensors it would load
    (void)recorded;
    write_safetensors(dir + "/tokenizer-e351c8d8-checkpoint125.safetensors", weights.tensors(), at::kBFloat16);
  }
  return dir;
}

}  // namespace izwi::testing
