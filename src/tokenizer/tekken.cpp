// Loading of Mistral's tekken.json: tiktoken-style byte-pair encoding by rank, with the special
// tokens taking the first ids and every rank shifted up by their count.

#include <nlohmann/json.hpp>

#include <array>
#include <unordered_map>

#include "common/base64.h"
#include "common/check.h"
#include "common/json_fields.h"
#include "tokenizer/bpe_merge.h"
#include "tokenizer/json_input.h"
#include "tokenizer/regex.h"
#include "tokenizer/token_cache.h"
#include "tokenizer/tokenizer_data.h"

namespace izwi {
namespace {

std::string token_bytes(const std::string& text, const std::string& where) {
  std::optional<std::string> bytes = base64_decode(text);
  if (!bytes) fail(ErrorCode::InvalidFormat, "{}: token_bytes is not base64", where);
  return *std::move(bytes);
}

// Ordinary text: split with the file's regex, then merge bytes by the rank of what they form.
class Tekken : public TextModel {
 public:
  Tekken(const std::string& pattern, std::vector<std::string> rank_bytes, int32_t num_special,
         const std::string& origin)
      : regex_(pattern, false, origin + ": config.pattern"),
        rank_bytes_(std::move(rank_bytes)),
        num_special_(num_special) {
    // Keys view rank_bytes_, which is never resized after this point.
    ranks_.reserve(rank_bytes_.size());
    for (size_t r = 0; r < rank_bytes_.size(); ++r) ranks_.emplace(rank_bytes_[r], static_cast<uint32_t>(r));
    for (int b = 0; b < 256; ++b) {
      const char byte = static_cast<char>(b);
      const auto it = ranks_.find(std::string_view(&byte, 1));
      if (it == ranks_.end()) fail(ErrorCode::InvalidFormat, "{}: vocab has no token for byte 0x{:02X}", origin, b);
      byte_ids_[b] = static_cast<int32_t>(it->second) + num_special_;
    }
  }

  std::string normalize(std::string_view text, bool*) const override { return std::string(text); }

  void encode(std::string_view normalized, std::vector<int32_t>& ids, bool) const override {
    std::vector<std::string_view> pieces;
    regex_.split_isolated(normalized, pieces);
    for (std::string_view piece : pieces) encode_piece(piece, ids);
  }

 private:
  void encode_piece(std::string_view piece, std::vector<int32_t>& ids) const {
    if (const auto it = ranks_.find(piece); it != ranks_.end()) {
      ids.push_back(static_cast<int32_t>(it->second) + num_special_);
      return;
    }
    if (cache_.lookup(piece, ids)) return;
    thread_local std::vector<bpe::Symbol> symbols;
    bpe::init_bytes(piece, byte_ids_.data(), symbols);
    const size_t first = ids.size();
    bpe::merge(
        symbols,
        [&](const bpe::Symbol& l, const bpe::Symbol& r) -> std::optional<bpe::Merge> {
          const auto it = ranks_.find(piece.substr(l.start, l.len + r.len));
          if (it == ranks_.end()) return std::nullopt;
          return bpe::Merge{it->second, static_cast<int32_t>(it->second) + num_special_};
        },
        ids);
    cache_.insert(piece, ids.data() + first, ids.size() - first);
  }

  Regex regex_;
  std::vector<std::string> rank_bytes_;
  std::unordered_map<std::string_view, uint32_t> ranks_;
  std::array<int32_t, 256> byte_ids_{};
  int32_t num_special_;
  TokenCache cache_;
};

TokenizerData tekken_json_from(const nlohmann::json& doc, const std::string& origin) {
  const JsonFields fields(doc, origin);
  const auto config = fields.object("config");
  if (!config) fail(ErrorCode::InvalidFormat, "{}: required field 'config' is missing", origin);
  const std::string pattern = config->get<std::string>("pattern");
  const int32_t num_special = config->get<int32_t>("default_num_special_tokens");
  const nlohmann::json vocab = fields.get<nlohmann::json>("vocab");
  const nlohmann::json specials = fields.get_or<nlohmann::json>("special_tokens", nlohmann::json::array());
  if (!vocab.is_array() || !specials.is_array()) {
    fail(ErrorCode::InvalidFormat, "{}: 'vocab' and 'special_tokens' must be lists", origin);
  }
  // Unlisted special ids get filler names; the bound keeps a hostile count from allocating gigabytes.
  constexpr int32_t kMaxUnlistedSpecial = 1 << 16;
  if (num_special < static_cast<int32_t>(specials.size()) ||
      num_special - static_cast<int64_t>(specials.size()) > kMaxUnlistedSpecial) {
    fail(ErrorCode::InvalidFormat,
         "{}: config.default_num_special_tokens ({}) is below the {} special tokens listed "
         "or more than {} above",
         origin, num_special, specials.size(), kMaxUnlistedSpecial);
  }
  // As mistral_common does: the vocabulary is cut to default_vocab_size ids in all.
  const int64_t vocab_size =
      config->get_or<int64_t>("default_vocab_size", num_special + static_cast<int64_t>(vocab.size()));
  if (vocab_size < num_special || vocab_size - num_special > static_cast<int64_t>(vocab.size())) {
    fail(ErrorCode::InvalidFormat, "{}: config.default_vocab_size ({}) does not fit {} special and {} vocab tokens",
         origin, vocab_size, num_special, vocab.size());
  }
  const size_t inner_size = static_cast<size_t>(vocab_size - num_special);

  TokenizerData data;
  data.tekken = true;
  for (int32_t i = 0; i < num_special; ++i) {
    std::string name = "<SPECIAL_" + std::to_string(i) + ">";  // filler for unlisted ids, as mistral_common
    if (static_cast<size_t>(i) < specials.size()) {
      const JsonFields s(specials[i], origin + ": special_tokens[" + std::to_string(i) + "]");
      if (s.get<int32_t>("rank") != i) fail(ErrorCode::InvalidFormat, "{}: rank is not {}", s.origin(), i);
      name = s.get<std::string>("token_str");
    }
    data.set(i, name, TokenKind::Special);
    data.token_ids.assign(name, i);
    data.added.push_back(AddedToken{name, i, true, false, false, false, false});
  }
  std::vector<std::string> rank_bytes(inner_size);
  for (size_t r = 0; r < inner_size; ++r) {
    const JsonFields v(vocab[r], origin + ": vocab[" + std::to_string(r) + "]");
    if (v.get<int64_t>("rank") != static_cast<int64_t>(r))
      fail(ErrorCode::InvalidFormat, "{}: rank is not {}", v.origin(), r);
    rank_bytes[r] = token_bytes(v.get<std::string>("token_bytes"), v.origin());
    if (rank_bytes[r].empty()) fail(ErrorCode::InvalidFormat, "{}: token_bytes is empty", v.origin());
    const int32_t id = static_cast<int32_t>(r) + num_special;
    data.set(id, rank_bytes[r], TokenKind::Normal);
    data.token_ids.emplace(rank_bytes[r], id);
  }
  data.model = std::make_unique<Tekken>(pattern, std::move(rank_bytes), num_special, origin);
  return data;
}

}  // namespace

TokenizerData load_tekken_json(std::string_view json_text, const std::string& origin) {
  return read_json_text(json_text, origin, [&](const nlohmann::json& doc) { return tekken_json_from(doc, origin); });
}

}  // namespace izwi
