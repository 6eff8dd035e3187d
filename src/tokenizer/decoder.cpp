#include "tokenizer/decoder.h"

#include "common/check.h"
#include "common/json_fields.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/json_input.h"
#include "tokenizer/utf8.h"

namespace izwi {
namespace {

// "<0xAB>" -> 0xAB, as the ByteFallback decoder reads byte tokens.
std::optional<uint8_t> byte_token(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return std::nullopt;
  uint8_t value = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = token[i];
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) return std::nullopt;
    value = static_cast<uint8_t>(value * 16 + digit);
  }
  return value;
}

// The Strip decoder: up to `start` leading and `stop` trailing `content` characters.
std::string strip(const std::string& token, const std::string& content, size_t start, size_t stop) {
  size_t begin = 0, end = token.size();
  for (size_t i = 0; i < start && token.compare(begin, content.size(), content) == 0 && begin < end; ++i)
    begin += content.size();
  for (size_t i = 0;
       i < stop && end >= begin + content.size() && token.compare(end - content.size(), content.size(), content) == 0;
       ++i)
    end -= content.size();
  return token.substr(begin, end - begin);
}

std::string single_char(const JsonFields& fields, const char* key) {
  const std::string c = fields.get<std::string>(key);
  size_t n = 0;
  if (c.empty() || (utf8::decode_at(c, 0, &n), n != c.size()))
    fail(ErrorCode::InvalidFormat, "{}: '{}' must be one character", fields.origin(), key);
  return c;
}

}  // namespace

Decoder Decoder::from_json(const nlohmann::json& value, const std::string& origin) {
  Decoder d;
  if (value.is_null()) {
    d.none_ = true;
    return d;
  }
  d.parse(value, origin);
  return d;
}

void Decoder::parse(const nlohmann::json& value, const std::string& origin) {
  const std::string type = component_type(value);
  const JsonFields fields(value, origin + ": decoder " + type);
  if (type == "Sequence") {
    const nlohmann::json list = fields.get<nlohmann::json>("decoders");
    if (!list.is_array()) fail(ErrorCode::InvalidFormat, "{}: 'decoders' is not a list", fields.origin());
    for (const auto& step : list) parse(step, origin);
    return;
  }
  Step step;
  if (type == "ByteLevel") {
    step.kind = Kind::ByteLevel;
  } else if (type == "Replace") {
    step.kind = Kind::Replace;
    step.regex = pattern_regex(fields);
    step.content = fields.get<std::string>("content");
  } else if (type == "ByteFallback") {
    step.kind = Kind::ByteFallback;
  } else if (type == "Fuse") {
    step.kind = Kind::Fuse;
  } else if (type == "Strip") {
    step.kind = Kind::Strip;
    step.content = single_char(fields, "content");
    step.start = fields.get<size_t>("start");
    step.stop = fields.get<size_t>("stop");
  } else if (type == "Metaspace") {
    step.kind = Kind::Metaspace;
    step.content = single_char(fields, "replacement");
    std::string scheme = fields.get_or<std::string>("prepend_scheme", "always");
    if (fields.has("add_prefix_space") && !fields.get<bool>("add_prefix_space")) scheme = "never";
    step.strip_first = scheme != "never";
  } else {
    fail(ErrorCode::Unsupported,
         "{}: decoder '{}' is not supported (supported: ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace, "
         "Sequence)",
         origin, type);
  }
  steps_.push_back(std::move(step));
}

bool Decoder::byte_level_only() const {
  if (none_ || steps_.empty()) return false;
  for (const Step& s : steps_)
    if (s.kind != Kind::ByteLevel) return false;
  return true;
}

std::string Decoder::decode(std::vector<std::string> tokens) const {
  if (none_) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
  }
  std::vector<std::string> next;
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::ByteLevel: {
        std::string bytes;
        for (const std::string& t : tokens) bytes += byte_level::decode(t);
        tokens.assign(1, utf8::lossy(bytes));
        break;
      }
      case Kind::Replace:
        for (std::string& t : tokens) t = replace_all(*step.regex, t, step.content);
        break;
      case Kind::ByteFallback: {
        next.clear();
        std::string pending;
        const auto flush = [&] {
          if (pending.empty()) return;
          if (!utf8::first_invalid(pending)) {
            next.push_back(pending);
          } else {
            for (size_t i = 0; i < pending.size(); ++i) next.emplace_back("\xEF\xBF\xBD");
          }
          pending.clear();
        };
        for (std::string& t : tokens) {
          if (const auto b = byte_token(t)) {
            pending += static_cast<char>(*b);
          } else {
            flush();
            next.push_back(std::move(t));
          }
        }
        flush();
        tokens.swap(next);
        break;
      }
      case Kind::Fuse: {
        std::string all;
        for (const std::string& t : tokens) all += t;
        tokens.assign(1, std::move(all));
        break;
      }
      case Kind::Strip:
        for (std::string& t : tokens) t = strip(t, step.content, step.start, step.stop);
        break;
      case Kind::Metaspace:
        for (size_t i = 0; i < tokens.size(); ++i) {
          std::string out;
          const std::string& t = tokens[i];
          for (size_t pos = 0; pos < t.size();) {
            if (t.compare(pos, step.content.size(), step.content) == 0) {
              if (!(i == 0 && step.strip_first)) out += ' ';
              pos += step.content.size();
            } else {
              out += t[pos++];
            }
          }
          tokens[i] = std::move(out);
        }
        break;
    }
  }
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
}

size_t Decoder::leading_spaces_stripped() const {
  bool fused = false;
  size_t strip = 0;
  for (const Step& step : steps_) {
    if (step.kind == Kind::ByteLevel || step.kind == Kind::Fuse) fused = true;
    if (step.kind == Kind::Strip && fused && step.content == " ") strip += step.start;
  }
  return strip;
}

std::string Decoder::token_bytes(const std::string& token, bool first) const {
  if (none_) return token;
  std::string t = token;
  bool fused = false;
  for (const Step& step : steps_) {
    if (utf8::first_invalid(t)) break;  // a lone byte of ByteFallback / ByteLevel: the text steps do not apply
    switch (step.kind) {
      case Kind::ByteLevel:
        t = byte_level::decode(t);
        fused = true;
        break;
      case Kind::Replace:
        t = replace_all(*step.regex, t, step.content);
        break;
      case Kind::ByteFallback:
        if (const auto b = byte_token(t)) t = std::string(1, static_cast<char>(*b));
        break;
      case Kind::Fuse:
        fused = true;
        break;
      case Kind::Strip:
        if (!fused) t = strip(t, step.content, step.start, step.stop);
        break;
      case Kind::Metaspace: {
        std::string out;
        for (size_t pos = 0; pos < t.size();) {
          if (t.compare(pos, step.content.size(), step.content) == 0) {
            if (!(first && step.strip_first)) out += ' ';
            pos += step.content.size();
          } else {
            out += t[pos++];
          }
        }
        t = std::move(out);
        break;
      }
    }
  }
  return t;
}

}  // namespace izwi
