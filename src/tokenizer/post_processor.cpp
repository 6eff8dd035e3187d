#include "tokenizer/post_processor.h"

#include "common/check.h"
#include "common/json_fields.h"

namespace izwi {
namespace {

void parse_template(const JsonFields& fields, const std::string& origin, PostProcessor& out) {
  const nlohmann::json single = fields.get<nlohmann::json>("single");
  const nlohmann::json specials = fields.get_or<nlohmann::json>("special_tokens", nlohmann::json::object());
  if (!single.is_array()) fail(ErrorCode::InvalidFormat, "{}: TemplateProcessing 'single' is not a list", origin);
  bool after_text = false;
  for (const auto& piece : single) {
    if (piece.contains("Sequence")) {
      if (after_text) fail(ErrorCode::Unsupported, "{}: TemplateProcessing with two sequences in 'single'", origin);
      after_text = true;
      continue;
    }
    const JsonFields special(piece.is_object() && piece.contains("SpecialToken") ? piece["SpecialToken"] : piece,
                             origin + ": TemplateProcessing single");
    const std::string name = special.get<std::string>("id");
    if (!specials.is_object() || !specials.contains(name)) {
      fail(ErrorCode::InvalidFormat, "{}: TemplateProcessing uses '{}', which special_tokens does not define", origin,
           name);
    }
    const auto ids = JsonFields(specials[name], origin + ": special_tokens." + name).get<std::vector<int32_t>>("ids");
    auto& target = after_text ? out.suffix : out.prefix;
    target.insert(target.end(), ids.begin(), ids.end());
  }
}

void parse_into(const nlohmann::json& value, const std::string& origin, PostProcessor& out) {
  const JsonFields fields(value, origin + ": post_processor");
  const std::string type = fields.get<std::string>("type");
  if (type == "ByteLevel") return;  // only trims offsets, which izwi does not report
  if (type == "TemplateProcessing") return parse_template(fields, origin, out);
  if (type == "Sequence") {
    const nlohmann::json list = fields.get<nlohmann::json>("processors");
    if (!list.is_array())
      fail(ErrorCode::InvalidFormat, "{}: post_processor Sequence: 'processors' is not a list", origin);
    for (const auto& step : list) parse_into(step, origin, out);
    return;
  }
  fail(ErrorCode::Unsupported,
       "{}: post_processor '{}' is not supported (supported: TemplateProcessing, ByteLevel, Sequence)", origin, type);
}

}  // namespace

PostProcessor PostProcessor::from_json(const nlohmann::json& value, const std::string& origin) {
  PostProcessor p;
  if (value.is_null()) return p;
  parse_into(value, origin, p);
  return p;
}

}  // namespace izwi
