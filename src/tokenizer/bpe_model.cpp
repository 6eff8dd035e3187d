#include "tokenizer/bpe_model.h"

#include "common/check.h"
#include "common/json_fields.h"
#include "tokenizer/byte_level.h"

namespace izwi {
namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// A merge is "a b" (older files) or ["a", "b"] (newer files, which allow spaces in tokens).
std::pair<std::string, std::string> merge_parts(const nlohmann::json& merge, const std::string& origin, size_t index) {
  if (merge.is_string()) {
    const std::string& s = merge.get_ref<const std::string&>();
    const size_t space = s.find(' ');
    if (space != std::string::npos && s.find(' ', space + 1) == std::string::npos) {
      return {s.substr(0, space), s.substr(space + 1)};
    }
  } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
    return {merge[0].get<std::string>(), merge[1].get<std::string>()};
  }
  fail(ErrorCode::InvalidFormat, "{}: model.merges[{}] is neither \"a b\" nor [\"a\", \"b\"]: {}", origin, index,
       merge.dump());
}

}  // namespace

BpeModel BpeModel::from_json(const nlohmann::json& model, const std::string& origin) {
  const JsonFields fields(model, origin + ": model");
  const std::string type = fields.get_or<std::string>("type", "BPE");
  if (type != "BPE") fail(ErrorCode::Unsupported, "{}: model type '{}' is not supported (only BPE)", origin, type);
  if (fields.get_or("dropout", 0.0) != 0.0) fail(ErrorCode::Unsupported, "{}: BPE dropout is not supported", origin);
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (!fields.get_or<std::string>(key, "").empty()) {
      fail(ErrorCode::Unsupported, "{}: BPE '{}' is not supported (byte-level BPE has none)", origin, key);
    }
  }
  if (fields.get_or("byte_fallback", false)) {
    fail(ErrorCode::Unsupported, "{}: BPE byte_fallback is not supported (byte-level BPE needs none)", origin);
  }

  BpeModel m;
  m.ignore_merges_ = fields.get_or("ignore_merges", false);
  const nlohmann::json vocab = fields.get<nlohmann::json>("vocab");
  if (!vocab.is_object()) fail(ErrorCode::InvalidFormat, "{}: model.vocab is not an object", origin);
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      fail(ErrorCode::InvalidFormat, "{}: model.vocab['{}'] is not a valid id: {}", origin, token, id.dump());
    }
    m.vocab_.emplace(token, id.get<int32_t>());
    m.bytes_to_id_.emplace(byte_level::decode(token), id.get<int32_t>());
  }
  for (int b = 0; b < 256; ++b) {
    const auto it = m.vocab_.find(byte_level::encode(std::string(1, static_cast<char>(b))));
    if (it == m.vocab_.end()) {
      fail(ErrorCode::InvalidFormat, "{}: model.vocab has no token for byte 0x{:02X}; byte-level BPE needs all 256",
           origin, b);
    }
    m.byte_ids_[b] = it->second;
  }
  const nlohmann::json merges = fields.get<nlohmann::json>("merges");
  if (!merges.is_array()) fail(ErrorCode::InvalidFormat, "{}: model.merges is not a list", origin);
  m.merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const auto [left, right] = merge_parts(merges[i], origin, i);
    const auto l = m.vocab_.find(left), r = m.vocab_.find(right), merged = m.vocab_.find(left + right);
    if (l == m.vocab_.end() || r == m.vocab_.end() || merged == m.vocab_.end()) {
      fail(ErrorCode::InvalidFormat, "{}: model.merges[{}] ('{}' + '{}') uses a token missing from model.vocab", origin,
           i, left, right);
    }
    // The first occurrence of a pair wins, as in the reference implementation.
    m.merges_.emplace(pair_key(l->second, r->second), bpe::Merge{static_cast<uint32_t>(i), merged->second});
  }
  return m;
}

void BpeModel::encode_piece(std::string_view piece, std::vector<int32_t>& ids) const {
  if (ignore_merges_) {
    const auto it = bytes_to_id_.find(std::string(piece));
    if (it != bytes_to_id_.end()) {
      ids.push_back(it->second);
      return;
    }
  }
  if (cache_->lookup(piece, ids)) return;
  thread_local std::vector<bpe::Symbol> symbols;
  bpe::init_bytes(piece, byte_ids_.data(), symbols);
  const size_t first = ids.size();
  bpe::merge(
      symbols,
      [this](const bpe::Symbol& l, const bpe::Symbol& r) -> std::optional<bpe::Merge> {
        const auto it = merges_.find(pair_key(l.id, r.id));
        if (it == merges_.end()) return std::nullopt;
        return it->second;
      },
      ids);
  cache_->insert(piece, ids.data() + first, ids.size() - first);
}

}  // namespace izwi
