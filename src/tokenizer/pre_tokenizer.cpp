#include "tokenizer/pre_tokenizer.h"

#include "common/check.h"
#include "common/json_fields.h"

namespace izwi {
namespace {

// The regex the ByteLevel pre-tokenizer uses when use_regex is true (GPT-2's).
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

}  // namespace

PreTokenizer PreTokenizer::from_json(const nlohmann::json& value, const std::string& origin) {
  PreTokenizer p;
  bool has_byte_level = false;
  p.parse(value, origin, has_byte_level);
  if (!has_byte_level) {
    fail(ErrorCode::Unsupported,
         "{}: pre_tokenizer has no ByteLevel step; only byte-level BPE tokenizers are supported", origin);
  }
  return p;
}

void PreTokenizer::parse(const nlohmann::json& value, const std::string& origin, bool& has_byte_level) {
  if (value.is_null()) return;
  const JsonFields fields(value, origin + ": pre_tokenizer");
  const std::string type = fields.get<std::string>("type");
  if (type == "Sequence") {
    const nlohmann::json list = fields.get<nlohmann::json>("pretokenizers");
    if (!list.is_array())
      fail(ErrorCode::InvalidFormat, "{}: pre_tokenizer Sequence: 'pretokenizers' is not a list", origin);
    for (const auto& step : list) parse(step, origin, has_byte_level);
  } else if (type == "Split") {
    const std::string behavior = fields.get<std::string>("behavior");
    if (behavior != "Isolated" || fields.get_or("invert", false)) {
      fail(ErrorCode::Unsupported, "{}: pre_tokenizer Split with behavior '{}'{} is not supported (only Isolated)",
           origin, behavior, fields.get_or("invert", false) ? " and invert" : "");
    }
    const nlohmann::json pattern_json = fields.get<nlohmann::json>("pattern");
    const JsonFields pattern(pattern_json, origin + ": Split pattern");
    const bool literal = !pattern.has("Regex");
    const std::string text = literal ? pattern.get<std::string>("String") : pattern.get<std::string>("Regex");
    steps_.push_back({std::make_shared<Regex>(text, literal, origin + ": pre_tokenizer Split"), false});
  } else if (type == "ByteLevel") {
    has_byte_level = true;
    Step step;
    step.add_prefix_space = fields.get_or("add_prefix_space", false);
    if (fields.get_or("use_regex", true))
      step.regex = std::make_shared<Regex>(kGpt2Pattern, false, origin + ": ByteLevel");
    steps_.push_back(std::move(step));
  } else {
    fail(ErrorCode::Unsupported, "{}: pre_tokenizer '{}' is not supported (supported: Split, ByteLevel, Sequence)",
         origin, type);
  }
}

void PreTokenizer::split(std::string_view text, PreTokens& out) const {
  out.pieces.assign(1, text);
  std::vector<std::string_view> next;
  for (const Step& step : steps_) {
    next.clear();
    for (std::string_view piece : out.pieces) {
      if (step.add_prefix_space && !piece.empty() && piece.front() != ' ') {
        piece = out.storage.emplace_back(" " + std::string(piece));
      }
      if (step.regex) {
        step.regex->split_isolated(piece, next);
      } else if (!piece.empty()) {
        next.push_back(piece);
      }
    }
    out.pieces.swap(next);
  }
}

}  // namespace izwi
