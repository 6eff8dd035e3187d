// Qwen2 / GPT-2 style tokenizer folders without tokenizer.json (vocab.json + merges.txt +
// tokenizer_config.json, as released Qwen3-TTS folders ship them). The files are turned into the
// tokenizer.json document that transformers' slow-to-fast conversion (Qwen2Converter,
// GPT2Converter) would produce, which then loads through the tokenizer.json path.

#include <filesystem>
#include <map>
#include <unordered_set>

#include "common/check.h"
#include "common/json_fields.h"
#include "tokenizer/json_input.h"
#include "tokenizer/tokenizer_data.h"

namespace izwi {
namespace {

// transformers' Qwen2Converter pre-tokenizer regex.
constexpr const char* kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum class Family { Qwen2, Gpt2 };

Family family_of(const JsonFields& config) {
  const std::string cls = config.get_or<std::string>("tokenizer_class", "");
  if (cls == "Qwen2Tokenizer" || cls == "Qwen2TokenizerFast") return Family::Qwen2;
  if (cls == "GPT2Tokenizer" || cls == "GPT2TokenizerFast") return Family::Gpt2;
  if (cls.empty()) {
    const std::string model_type = config.get_or<std::string>("model_type", "");
    if (model_type == "qwen2") return Family::Qwen2;
    if (model_type == "gpt2") return Family::Gpt2;
    fail(ErrorCode::Unsupported,
         "{}: names no tokenizer_class (nor model_type 'qwen2' / 'gpt2'); without tokenizer.json only "
         "Qwen2Tokenizer and GPT2Tokenizer folders (vocab.json + merges.txt) are supported",
         config.origin());
  }
  fail(ErrorCode::Unsupported,
       "{}: tokenizer_class '{}' is not supported without tokenizer.json (supported: Qwen2Tokenizer, GPT2Tokenizer)",
       config.origin(), cls);
}

// vocab.json: {"token": id, ...}.
nlohmann::json read_vocab(const std::string& path) {
  nlohmann::json vocab = read_json(path);
  if (!vocab.is_object()) fail(ErrorCode::InvalidFormat, "{}: is not an object of token -> id", path);
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      fail(ErrorCode::InvalidFormat, "{}: token '{}' has {}, which is not a token id", path, token, id.dump());
    }
  }
  return vocab;
}

// merges.txt: one "left right" pair per line, by rank; an optional "#version" first line and
// blank lines are skipped (as transformers' Qwen2Tokenizer reads it).
nlohmann::json read_merges(const std::string& path, const nlohmann::json& vocab) {
  const std::string text = read_text_file(path);
  nlohmann::json merges = nlohmann::json::array();
  constexpr const char* kSpace = " \t\r\v\f";
  size_t line_start = 0;
  for (size_t line_no = 1; line_start < text.size(); ++line_no) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = text.size();
    std::string_view line(text.data() + line_start, line_end - line_start);
    line_start = line_end + 1;
    const size_t first = line.find_first_not_of(kSpace);
    if (first == std::string_view::npos) continue;
    line = line.substr(first, line.find_last_not_of(kSpace) - first + 1);
    if (line_no == 1 && line.substr(0, 8) == "#version") continue;
    const size_t gap = line.find_first_of(kSpace);
    const size_t right_start = gap == std::string_view::npos ? gap : line.find_first_not_of(kSpace, gap);
    if (right_start == std::string_view::npos || line.find_first_of(kSpace, right_start) != std::string_view::npos) {
      fail(ErrorCode::InvalidFormat, "{}: line {} is not two tokens separated by a space: '{}'", path, line_no, line);
    }
    const std::string left(line.substr(0, gap)), right(line.substr(right_start));
    for (const std::string& token : {left, right, left + right}) {
      if (!vocab.contains(token)) {
        fail(ErrorCode::InvalidFormat, "{}: line {} merges '{}' + '{}', but '{}' is not in vocab.json", path, line_no,
             left, right, token);
      }
    }
    merges.push_back(nlohmann::json::array({left, right}));
  }
  return merges;
}

// A token field of tokenizer_config.json as an added token: "text" or {"content": "text", ...}.
std::optional<nlohmann::json> special_token_field(const nlohmann::json& value, const std::string& origin) {
  if (value.is_null()) return std::nullopt;
  nlohmann::json token = {{"content", value}, {"special", true}, {"normalized", false}};
  if (value.is_object()) {
    const JsonFields fields(value, origin);
    token["content"] = fields.get<std::string>("content");
    for (const char* flag : {"single_word", "lstrip", "rstrip", "normalized"}) {
      token[flag] = fields.get_or(flag, false);
    }
  } else if (!value.is_string()) {
    fail(ErrorCode::InvalidFormat, "{}: is neither a string nor {{\"content\": ...}}", origin);
  }
  return token;
}

}  // namespace

VocabMergesTokenizer load_vocab_merges_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string vocab_path = (fs::path(dir) / "vocab.json").string();
  const std::string merges_path = (fs::path(dir) / "merges.txt").string();
  const std::string config_path = (fs::path(dir) / "tokenizer_config.json").string();
  for (const std::string& path : {merges_path, config_path}) {
    if (!fs::exists(path)) {
      fail(ErrorCode::NotFound, "model folder '{}' has vocab.json but no tokenizer.json and no '{}'", dir,
           fs::path(path).filename().string());
    }
  }
  VocabMergesTokenizer result;
  result.config = read_json(config_path);
  if (!result.config.is_object()) fail(ErrorCode::InvalidFormat, "{}: is not a JSON object", config_path);
  const JsonFields config(result.config, config_path);
  const Family family = family_of(config);

  nlohmann::json vocab = read_vocab(vocab_path);
  nlohmann::json merges = read_merges(merges_path, vocab);

  // added_tokens_decoder: {"151643": {"content": "<|endoftext|>", "special": true, ...}, ...}.
  std::map<int32_t, nlohmann::json> added;
  std::unordered_set<std::string> added_contents;
  const nlohmann::json decoder = config.get_or<nlohmann::json>("added_tokens_decoder", nlohmann::json::object());
  if (!decoder.is_object()) fail(ErrorCode::InvalidFormat, "{}: added_tokens_decoder is not an object", config_path);
  // Real files number their tokens densely; the bound keeps a hostile id from allocating gigabytes.
  const int64_t id_limit = 2 * static_cast<int64_t>(vocab.size() + decoder.size()) + 1024;
  for (const auto& [key, value] : decoder.items()) {
    const std::string where = config_path + ": added_tokens_decoder['" + key + "']";
    const bool digits = !key.empty() && key.size() <= 10 && key.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(key) >= id_limit) {
      fail(ErrorCode::InvalidFormat, "{}: the key is not a token id near the {} tokens the files define", where,
           vocab.size() + decoder.size());
    }
    const JsonFields t(value, where);
    const std::string content = t.get<std::string>("content");
    if (content.empty()) fail(ErrorCode::InvalidFormat, "{}: content is empty", where);
    const bool special = t.get_or("special", false);
    added[static_cast<int32_t>(std::stoll(key))] = {
        {"content", content},
        {"special", special},
        {"single_word", t.get_or("single_word", false)},
        {"lstrip", t.get_or("lstrip", false)},
        {"rstrip", t.get_or("rstrip", false)},
        {"normalized", t.get_or("normalized", !special)},
    };
    added_contents.insert(content);
  }

  // The named special tokens become special added tokens too (transformers adds
  // all_special_tokens that are not added tokens yet), with the tokenizer class's defaults for
  // the keys the file leaves out (when the default is a token of the vocabulary).
  const std::map<std::string, const char*> defaults =
      family == Family::Qwen2
          ? std::map<std::string, const char*>{{"eos_token", "<|endoftext|>"},
                                               {"unk_token", "<|endoftext|>"},
                                               {"pad_token", "<|endoftext|>"}}
          : std::map<std::string, const char*>{
                {"bos_token", "<|endoftext|>"}, {"eos_token", "<|endoftext|>"}, {"unk_token", "<|endoftext|>"}};
  for (const auto& [key, token] : defaults) {
    if (!result.config.contains(key) && (vocab.contains(token) || added_contents.count(token) != 0)) {
      result.config[key] = token;
    }
  }
  std::vector<nlohmann::json> named;
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    if (auto token = special_token_field(result.config.value(key, nlohmann::json()), config_path + ": " + key)) {
      named.push_back(std::move(*token));
    }
  }
  if (config.has("additional_special_tokens")) {
    const nlohmann::json extra = config.get<nlohmann::json>("additional_special_tokens");
    if (!extra.is_array()) fail(ErrorCode::InvalidFormat, "{}: additional_special_tokens is not a list", config_path);
    for (const auto& value : extra) {
      if (auto token = special_token_field(value, config_path + ": additional_special_tokens[]")) {
        named.push_back(std::move(*token));
      }
    }
  }
  int64_t next_id = -1;
  for (const auto& [token, id] : vocab.items()) next_id = std::max(next_id, id.get<int64_t>());
  if (!added.empty()) next_id = std::max<int64_t>(next_id, added.rbegin()->first);
  ++next_id;
  for (nlohmann::json& token : named) {
    const std::string content = token["content"];
    if (content.empty() || !added_contents.insert(content).second) continue;
    const auto in_vocab = vocab.find(content);
    const int64_t id = in_vocab != vocab.end() ? in_vocab->get<int64_t>() : next_id++;
    if (id > INT32_MAX)
      fail(ErrorCode::InvalidFormat, "{}: no id is left for special token '{}'", config_path, content);
    added.emplace(static_cast<int32_t>(id), std::move(token));
  }
  nlohmann::json added_tokens = nlohmann::json::array();
  for (auto& [id, token] : added) {
    token["id"] = id;
    added_tokens.push_back(std::move(token));
  }

  nlohmann::json pre_tokenizer, normalizer;
  if (family == Family::Qwen2) {
    normalizer = {{"type", "NFC"}};
    pre_tokenizer = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", kQwen2Pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}};
  } else {
    // The ByteLevel pre-tokenizer's own regex is GPT-2's.
    pre_tokenizer = {{"type", "ByteLevel"},
                     {"add_prefix_space", config.get_or("add_prefix_space", false)},
                     {"trim_offsets", true},
                     {"use_regex", true}};
  }
  nlohmann::json doc = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", std::move(added_tokens)},
      {"normalizer", std::move(normalizer)},
      {"pre_tokenizer", std::move(pre_tokenizer)},
      {"post_processor", {{"type", "ByteLevel"}, {"trim_offsets", false}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", std::move(vocab)}, {"merges", std::move(merges)}}},
  };
  result.data = tokenizer_data_from_json(doc, vocab_path);
  return result;
}

}  // namespace izwi
