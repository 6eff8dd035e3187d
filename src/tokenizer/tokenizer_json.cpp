// Loading of Hugging Face tokenizer.json with a BPE model: byte-level (Llama 3, Qwen2/3, LFM2,
// GPT-4o) and SentencePiece style (Llama 2, Mistral, Gemma).

#include <nlohmann/json.hpp>

#include "common/check.h"
#include "common/json_fields.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/decoder.h"
#include "tokenizer/json_input.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer_data.h"

namespace izwi {
namespace {

class JsonBpe : public TextModel {
 public:
  JsonBpe(Normalizer normalizer, PreTokenizer pre_tokenizer, BpeModel model)
      : normalizer_(std::move(normalizer)), pre_tokenizer_(std::move(pre_tokenizer)), model_(std::move(model)) {}

  std::string normalize(std::string_view text, bool* kept_start) const override {
    return normalizer_.apply(text, kept_start);
  }

  void encode(std::string_view normalized, std::vector<int32_t>& ids, bool at_origin) const override {
    thread_local PreTokens pre;
    pre.storage.clear();
    pre_tokenizer_.split(normalized, at_origin, pre);
    for (std::string_view piece : pre.pieces) model_.encode_piece(piece, ids);
  }

 private:
  Normalizer normalizer_;
  PreTokenizer pre_tokenizer_;
  BpeModel model_;
};

}  // namespace

void TokenizerData::set(int32_t id, std::string bytes, TokenKind kind) {
  if (static_cast<size_t>(id) >= id_bytes.size()) {
    id_bytes.resize(id + 1);
    kinds.resize(id + 1, TokenKind::Missing);
  }
  id_bytes[id] = std::move(bytes);
  kinds[id] = kind;
}

void TokenizerData::set_token(int32_t id, std::string token) {
  if (static_cast<size_t>(id) >= id_tokens.size()) id_tokens.resize(id + 1);
  id_tokens[id] = std::move(token);
}

namespace {

TokenizerData tokenizer_json_from(const nlohmann::json& doc, const std::string& origin) {
  const JsonFields fields(doc, origin);
  for (const char* key : {"truncation", "padding"}) {
    if (fields.has(key))
      fail(ErrorCode::Unsupported, "{}: '{}' is not supported (izwi never truncates or pads)", origin, key);
  }
  auto decoder =
      std::make_shared<Decoder>(Decoder::from_json(fields.get_or<nlohmann::json>("decoder", nullptr), origin));
  PreTokenizer pre_tokenizer = PreTokenizer::from_json(fields.get_or<nlohmann::json>("pre_tokenizer", nullptr), origin);
  Normalizer normalizer = Normalizer::from_json(fields.get_or<nlohmann::json>("normalizer", nullptr), origin);

  TokenizerData data;
  BpeModel model = BpeModel::from_json(fields.json().at("model"), origin, pre_tokenizer.byte_level());
  // A SentencePiece-style model sees whole texts when nothing splits them (Llama 2) or when
  // Metaspace does not split: it may still cut before word starts where that changes nothing.
  if (!pre_tokenizer.byte_level())
    model.allow_cuts_before(pre_tokenizer.metaspace().empty() ? "\xE2\x96\x81" : pre_tokenizer.metaspace());
  // Byte-level decoding is the concatenation of each token's bytes; any other decoder runs as a
  // chain over the token strings.
  const bool fast_decode = decoder->byte_level_only();
  if (!fast_decode) data.decoder = decoder;
  const auto bytes_of = [&](std::string_view token) {
    return fast_decode ? byte_level::decode(token) : decoder->token_bytes(std::string(token));
  };
  const nlohmann::json added = fields.get_or<nlohmann::json>("added_tokens", nlohmann::json::array());
  if (!added.is_array()) fail(ErrorCode::InvalidFormat, "{}: 'added_tokens' is not a list", origin);
  // Real files number their tokens densely; the bound keeps a hostile id from allocating gigabytes.
  const size_t defined = model.vocab().size() + added.size();
  const int64_t id_limit = 2 * static_cast<int64_t>(defined) + 1024;
  const auto check_id = [&](int64_t id, const auto& where) {
    if (id < 0 || id >= id_limit) {
      fail(ErrorCode::InvalidFormat, "{}: {} has id {}, far outside the {} tokens the file defines", origin, where(),
           id, defined);
    }
  };
  data.id_bytes.reserve(defined);
  data.kinds.reserve(defined);
  model.vocab().for_each([&](std::string_view token, int32_t id) {
    check_id(id, [&] { return "model.vocab['" + std::string(token) + "']"; });
    data.set(id, bytes_of(token), TokenKind::Normal);
    if (!fast_decode) data.set_token(id, std::string(token));
  });
  data.token_ids = model.vocab();
  for (size_t i = 0; i < added.size(); ++i) {
    const JsonFields t(added[i], origin + ": added_tokens[" + std::to_string(i) + "]");
    AddedToken token;
    token.content = t.get<std::string>("content");
    token.id = t.get<int32_t>("id");
    check_id(token.id, [&] { return "added_tokens[" + std::to_string(i) + "]"; });
    if (token.content.empty()) fail(ErrorCode::InvalidFormat, "{}: content is empty", t.origin());
    token.special = t.get_or("special", false);
    token.single_word = t.get_or("single_word", false);
    token.lstrip = t.get_or("lstrip", false);
    token.rstrip = t.get_or("rstrip", false);
    token.normalized = t.get_or("normalized", !token.special);
    // Added tokens go through the decoder like any other token.
    data.set(token.id, bytes_of(token.content), token.special ? TokenKind::Special : TokenKind::Normal);
    if (!fast_decode) data.set_token(token.id, token.content);
    data.token_ids.assign(token.content, token.id);
    data.added.push_back(std::move(token));
  }
  data.post = PostProcessor::from_json(fields.get_or<nlohmann::json>("post_processor", nullptr), origin);
  for (const auto* list : {&data.post.prefix, &data.post.suffix}) {
    for (int32_t id : *list) {
      if (id < 0 || static_cast<size_t>(id) >= data.kinds.size() || data.kinds[id] == TokenKind::Missing) {
        fail(ErrorCode::InvalidFormat, "{}: post_processor adds id {}, which is not in the vocabulary", origin, id);
      }
    }
  }
  data.model = std::make_unique<JsonBpe>(std::move(normalizer), std::move(pre_tokenizer), std::move(model));
  return data;
}

}  // namespace

TokenizerData load_tokenizer_json(std::string_view json_text, const std::string& origin) {
  return read_json_text(json_text, origin, [&](const nlohmann::json& doc) { return tokenizer_json_from(doc, origin); });
}

TokenizerData tokenizer_data_from_json(const nlohmann::json& doc, const std::string& origin) {
  try {
    return tokenizer_json_from(doc, origin);
  } catch (const nlohmann::json::exception& e) {
    throw_invalid_format(origin, e.what());
  }
}

}  // namespace izwi
