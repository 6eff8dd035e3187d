#include "tokenizer/normalizer.h"

#include "common/check.h"
#include "common/json_fields.h"
#include "tokenizer/json_input.h"

namespace izwi {
namespace {

// Strip: removes leading / trailing characters with the White_Space property.
std::string_view strip(std::string_view text, bool left, bool right) {
  size_t begin = 0, end = text.size();
  while (left && begin < end) {
    size_t n = 0;
    if (!utf8::is_whitespace(utf8::decode_at(text, begin, &n))) break;
    begin += n;
  }
  while (right && end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
    size_t n = 0;
    if (!utf8::is_whitespace(utf8::decode_at(text, start, &n))) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

}  // namespace

Normalizer Normalizer::from_json(const nlohmann::json& value, const std::string& origin) {
  Normalizer n;
  n.parse(value, origin);
  return n;
}

void Normalizer::parse(const nlohmann::json& value, const std::string& origin) {
  if (value.is_null()) return;
  const std::string type = component_type(value);
  const JsonFields fields(value, origin + ": normalizer " + type);
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    const utf8::Form form = type == "NFC"    ? utf8::Form::NFC
                            : type == "NFD"  ? utf8::Form::NFD
                            : type == "NFKC" ? utf8::Form::NFKC
                                             : utf8::Form::NFKD;
    Step step;
    step.form = form;
    steps_.push_back(std::move(step));
  } else if (type == "Lowercase") {
    Step step;
    step.kind = Kind::Lowercase;
    steps_.push_back(std::move(step));
  } else if (type == "Strip") {
    Step step;
    step.kind = Kind::Strip;
    step.left = fields.get_or("strip_left", true);
    step.right = fields.get_or("strip_right", true);
    steps_.push_back(std::move(step));
  } else if (type == "Prepend") {
    Step step;
    step.kind = Kind::Prepend;
    step.content = fields.get<std::string>("prepend");
    steps_.push_back(std::move(step));
  } else if (type == "Replace") {
    Step step;
    step.kind = Kind::Replace;
    step.regex = pattern_regex(fields);
    step.content = fields.get<std::string>("content");
    steps_.push_back(std::move(step));
  } else if (type == "Sequence") {
    const nlohmann::json list = fields.get<nlohmann::json>("normalizers");
    if (!list.is_array()) fail(ErrorCode::InvalidFormat, "{}: 'normalizers' is not a list", fields.origin());
    for (const auto& step : list) parse(step, origin);
  } else {
    fail(ErrorCode::Unsupported,
         "{}: normalizer '{}' is not supported (supported: NFC, NFD, NFKC, NFKD, Lowercase, Strip, Prepend, Replace, "
         "Sequence)",
         origin, type);
  }
}

std::string Normalizer::apply(std::string_view text, bool* kept_start) const {
  if (steps_.size() == 1 && steps_[0].kind == Kind::Unicode) return utf8::normalize(text, steps_[0].form);
  std::string s(text);
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::Unicode:
        s = utf8::normalize(s, step.form);
        break;
      case Kind::Lowercase:
        s = utf8::lowercase(s);
        break;
      case Kind::Strip: {
        const std::string_view kept = strip(s, step.left, step.right);
        if (kept_start && kept.data() != s.data() && !s.empty()) *kept_start = false;
        s = std::string(kept);
        break;
      }
      case Kind::Prepend:
        if (!s.empty()) s.insert(0, step.content);
        break;
      case Kind::Replace:
        s = replace_all(*step.regex, s, step.content);
        break;
    }
  }
  return s;
}

}  // namespace izwi
