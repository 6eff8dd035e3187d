#include "common/tokenizer_files.h"

#include "tokenizer/byte_level.h"

namespace izwi::testing {

nlohmann::json tiny_tokenizer_json() {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level::encode(std::string(1, static_cast<char>(b)))] = b;
  vocab["he"] = 256;
  vocab["ll"] = 257;
  vocab["hell"] = 258;
  vocab["hello"] = 259;
  vocab["xyz"] = 260;
  const auto added = [](int id, const std::string& content, bool special, bool lstrip) {
    return nlohmann::json{{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", lstrip},
                          {"rstrip", false}, {"normalized", false}, {"special", special}};
  };
  return {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens",
       {added(300, "<|begin_of_text|>", true, false), added(301, "<|eot_id|>", true, false),
        added(302, "<|end_of_text|>", true, false), added(303, "<mask>", false, true)}},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", {"h e", "l l", nlohmann::json::array({"he", "ll"}), nlohmann::json::array({"hell", "o"})}}}},
  };
}

std::string write_tokenizer_dir(const TempDir& dir, const nlohmann::json& tokenizer,
                                const nlohmann::json& tokenizer_config, const nlohmann::json& generation_config) {
  dir.write("tokenizer.json", tokenizer.dump());
  if (!tokenizer_config.is_null()) dir.write("tokenizer_config.json", tokenizer_config.dump());
  if (!generation_config.is_null()) dir.write("generation_config.json", generation_config.dump());
  return dir.path();
}

std::string write_vocab_merges_dir(const TempDir& dir, const nlohmann::json& tokenizer,
                                   const std::string& tokenizer_class, nlohmann::json config) {
  nlohmann::json vocab = tokenizer.at("model").at("vocab");
  nlohmann::json added = nlohmann::json::object();
  for (const auto& token : tokenizer.at("added_tokens")) {
    vocab.erase(token.at("content").get<std::string>());
    nlohmann::json entry = token;
    entry.erase("id");
    added[std::to_string(token.at("id").get<int>())] = entry;
  }
  std::string merges = "#version: 0.2\n";
  for (const auto& merge : tokenizer.at("model").at("merges")) {
    merges += (merge.is_string() ? merge.get<std::string>()
                                 : merge.at(0).get<std::string>() + " " + merge.at(1).get<std::string>()) +
              "\n";
  }
  config["tokenizer_class"] = tokenizer_class;
  config["added_tokens_decoder"] = added;
  dir.write("vocab.json", vocab.dump());
  dir.write("merges.txt", merges);
  dir.write("tokenizer_config.json", config.dump());
  return dir.path();
}

std::string tokenizer_fixture(const std::string& name) { return std::string(IZWI_TEST_DATA_DIR) + "/" + name; }

}  // namespace izwi::testing
