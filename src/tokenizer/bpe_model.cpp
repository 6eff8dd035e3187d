#include "tokenizer/bpe_model.h"

#include "common/check.h"
#include "common/json_fields.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace izwi {
namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// A merge is "a b" (older files) or ["a", "b"] (newer files, which allow spaces in tokens).
std::pair<std::string_view, std::string_view> merge_parts(const nlohmann::json& merge, const std::string& origin,
                                                          size_t index) {
  if (merge.is_string()) {
    const std::string& s = merge.get_ref<const std::string&>();
    const size_t space = s.find(' ');
    if (space != std::string::npos && s.find(' ', space + 1) == std::string::npos) {
      return {std::string_view(s).substr(0, space), std::string_view(s).substr(space + 1)};
    }
  } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
    return {merge[0].get_ref<const std::string&>(), merge[1].get_ref<const std::string&>()};
  }
  fail(ErrorCode::InvalidFormat, "{}: model.merges[{}] is neither \"a b\" nor [\"a\", \"b\"]: {}", origin, index,
       merge.dump());
}

std::string optional_string(const JsonFields& fields, const char* key) {
  if (!fields.has(key) || fields.json().at(key).is_null()) return "";
  return fields.get<std::string>(key);
}

}  // namespace

BpeModel BpeModel::from_json(const nlohmann::json& model, const std::string& origin, bool byte_level) {
  const JsonFields fields(model, origin + ": model");
  const std::string type = fields.get_or<std::string>("type", "BPE");
  if (type != "BPE") fail(ErrorCode::Unsupported, "{}: model type '{}' is not supported (only BPE)", origin, type);

  BpeModel m;
  m.byte_level_ = byte_level;
  m.ignore_merges_ = fields.get_or("ignore_merges", false);
  m.fuse_unk_ = fields.get_or("fuse_unk", false);
  m.byte_fallback_ = fields.get_or("byte_fallback", false);
  m.prefix_ = optional_string(fields, "continuing_subword_prefix");
  m.suffix_ = optional_string(fields, "end_of_word_suffix");
  const nlohmann::json& vocab = fields.json().at("vocab");
  if (!vocab.is_object()) fail(ErrorCode::InvalidFormat, "{}: model.vocab is not an object", origin);
  m.vocab_.reserve(vocab.size());
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      fail(ErrorCode::InvalidFormat, "{}: model.vocab['{}'] is not a valid id: {}", origin, token, id.dump());
    }
    m.vocab_.emplace(token, id.get<int32_t>());
  }
  const std::string unk = optional_string(fields, "unk_token");
  if (!unk.empty()) {
    m.unk_ = m.find(unk);
    if (!m.unk_) fail(ErrorCode::InvalidFormat, "{}: model.unk_token '{}' is not in model.vocab", origin, unk);
  }
  if (byte_level) {
    m.raw_bytes_ = m.prefix_.empty() && m.suffix_.empty();
    for (int b = 0; b < 256 && m.raw_bytes_; ++b) {
      const auto id = m.find(byte_level::encode(std::string(1, static_cast<char>(b))));
      if (id) {
        m.byte_ids_[b] = *id;
      } else {
        m.raw_bytes_ = false;  // a byte without a token: the general path gives it unk_token
      }
    }
  }
  m.fallback_.fill(-1);
  if (m.byte_fallback_) {
    for (int b = 0; b < 256; ++b) {
      if (const auto id = m.find(fmt::format("<0x{:02X}>", b))) m.fallback_[b] = *id;
    }
  }
  if (m.prefix_.empty() && m.suffix_.empty() && !m.raw_bytes_) {
    m.bmp_ids_.assign(0x10000, -1);
    m.vocab_.for_each([&](std::string_view token, int32_t id) {
      if (token.empty() || token.size() > 3) return;
      size_t n = 0;
      const char32_t cp = utf8::decode_at(token, 0, &n);
      if (n == token.size() && cp < 0x10000) m.bmp_ids_[cp] = id;
    });
  }

  const nlohmann::json& merges = fields.json().at("merges");
  if (!merges.is_array()) fail(ErrorCode::InvalidFormat, "{}: model.merges is not a list", origin);
  m.merges_.reserve(merges.size());
  std::string joined;
  for (size_t i = 0; i < merges.size(); ++i) {
    const auto [left, right] = merge_parts(merges[i], origin, i);
    const auto l = m.find(left), r = m.find(right);
    // The merged token drops the right part's continuing_subword_prefix, as the library builds it.
    const bool has_prefix = !m.prefix_.empty() && right.size() >= m.prefix_.size();
    joined.assign(left);
    joined.append(right.substr(has_prefix ? m.prefix_.size() : 0));
    const auto merged = m.find(joined);
    if (!l || !r || !merged) {
      fail(ErrorCode::InvalidFormat, "{}: model.merges[{}] ('{}' + '{}') uses a token missing from model.vocab", origin,
           i, left, right);
    }
    // The first occurrence of a pair wins, as in the reference implementation.
    m.merges_.emplace(pair_key(*l, *r), bpe::Merge{static_cast<uint32_t>(i), *merged});
  }
  return m;
}

void BpeModel::allow_cuts_before(const std::string& replacement) {
  if (raw_bytes_ || byte_level_ || !prefix_.empty() || !suffix_.empty() || !find(replacement)) return;
  // id -> whether its token starts with / ends with the replacement character.
  std::unordered_map<int32_t, std::string_view> tokens;
  tokens.reserve(vocab_.size());
  vocab_.for_each([&](std::string_view token, int32_t id) { tokens.emplace(id, token); });
  const auto starts = [&](int32_t id) { return tokens.at(id).compare(0, replacement.size(), replacement) == 0; };
  const auto ends = [&](int32_t id) {
    const std::string_view t = tokens.at(id);
    return t.size() >= replacement.size() &&
           t.compare(t.size() - replacement.size(), replacement.size(), replacement) == 0;
  };
  for (const auto& [key, merge] : merges_) {
    const int32_t left = static_cast<int32_t>(key >> 32), right = static_cast<int32_t>(key & 0xFFFFFFFFu);
    if (!ends(left) && starts(right)) return;
  }
  cut_before_ = replacement;
}

void BpeModel::encode_piece(std::string_view piece, std::vector<int32_t>& ids) const {
  if (cut_before_.empty() || piece.size() <= TokenCache::kMaxPieceBytes) return encode_word(piece, ids);
  const std::string_view r = cut_before_;
  size_t start = 0;
  for (size_t pos = piece.find(r, 1); pos != std::string_view::npos; pos = piece.find(r, pos + r.size())) {
    if (pos >= r.size() && piece.compare(pos - r.size(), r.size(), r) == 0) continue;  // inside a run of them
    encode_word(piece.substr(start, pos - start), ids);
    start = pos;
  }
  encode_word(piece.substr(start), ids);
}

void BpeModel::init_chars(std::string_view word, std::vector<bpe::Symbol>& symbols) const {
  symbols.clear();
  int32_t unk_id = -1;  // pending unknown symbol (-1: none) and its byte length
  uint32_t unk_len = 0;
  const auto add = [&](int32_t id, uint32_t len) {
    const int32_t index = static_cast<int32_t>(symbols.size());
    symbols.push_back({0, len, id, index - 1, -1});
    if (index > 0) symbols[index - 1].next = index;
  };
  std::string scratch;
  for (size_t pos = 0; pos < word.size();) {
    size_t n = 0;
    const char32_t cp = utf8::decode_at(word, pos, &n);
    const std::string_view ch = word.substr(pos, n);
    const bool first = pos == 0, last = pos + n == word.size();
    pos += n;
    int32_t id = -1;
    if (!bmp_ids_.empty()) {
      if (cp < 0x10000) {
        id = bmp_ids_[cp];
      } else if (const auto found = find(ch)) {
        id = *found;
      }
    } else {
      scratch.clear();
      if (!first) scratch += prefix_;
      scratch += ch;
      if (last) scratch += suffix_;
      if (const auto found = find(scratch)) id = *found;
    }
    if (id >= 0) {
      if (unk_id >= 0) add(unk_id, unk_len);
      unk_id = -1;
      add(id, static_cast<uint32_t>(n));
      continue;
    }
    if (byte_fallback_) {
      // Every byte of the symbol (prefix and suffix included) needs its <0xAB> token.
      const std::string_view s = bmp_ids_.empty() ? std::string_view(scratch) : ch;
      bool all = true;
      for (char b : s) all = all && fallback_[static_cast<uint8_t>(b)] >= 0;
      if (all) {
        for (char b : s) add(fallback_[static_cast<uint8_t>(b)], 1);
        continue;
      }
    }
    if (unk_) {
      if (unk_id >= 0 && fuse_unk_) {
        unk_len += static_cast<uint32_t>(n);
      } else {
        if (unk_id >= 0) add(unk_id, unk_len);
        unk_id = *unk_;
        unk_len = static_cast<uint32_t>(n);
      }
    }
  }
  if (unk_id >= 0) add(unk_id, unk_len);
}

void BpeModel::encode_word(std::string_view piece, std::vector<int32_t>& ids) const {
  if (piece.empty()) return;
  // The cache holds what the steps below give, so it may answer first.
  if (cache_->lookup(piece, ids)) return;
  thread_local std::string spelled;
  std::string_view word = piece;
  if (byte_level_ && (!raw_bytes_ || ignore_merges_)) {
    spelled = byte_level::encode(piece);
    if (!raw_bytes_) word = spelled;
  }
  if (ignore_merges_) {
    if (const auto id = find(byte_level_ ? std::string_view(spelled) : word)) {
      ids.push_back(*id);
      cache_->insert(piece, &*id, 1);
      return;
    }
  }
  thread_local std::vector<bpe::Symbol> symbols;
  if (raw_bytes_) {
    bpe::init_bytes(piece, byte_ids_.data(), symbols);
  } else {
    init_chars(word, symbols);
  }
  const size_t first = ids.size();
  if (!symbols.empty()) {
    bpe::merge(
        symbols,
        [this](const bpe::Symbol& l, const bpe::Symbol& r) -> std::optional<bpe::Merge> {
          const auto it = merges_.find(pair_key(l.id, r.id));
          if (it == merges_.end()) return std::nullopt;
          return it->second;
        },
        ids);
  }
  cache_->insert(piece, ids.data() + first, ids.size() - first);
}

}  // namespace izwi
