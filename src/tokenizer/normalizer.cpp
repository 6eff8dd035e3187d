#include "tokenizer/normalizer.h"

#include "common/check.h"
#include "tokenizer/json_input.h"
#include "tokenizer/utf8.h"

namespace izwi {
namespace {

void parse_into(const nlohmann::json& value, const std::string& origin, bool& nfc) {
  if (value.is_null()) return;
  const std::string type = component_type(value);
  if (type == "NFC") {
    nfc = true;
  } else if (type == "Sequence" && value.contains("normalizers") && value["normalizers"].is_array()) {
    for (const auto& step : value["normalizers"]) parse_into(step, origin, nfc);
  } else {
    fail(ErrorCode::Unsupported, "{}: normalizer '{}' is not supported (supported: NFC, Sequence)", origin, type);
  }
}

}  // namespace

Normalizer Normalizer::from_json(const nlohmann::json& value, const std::string& origin) {
  Normalizer n;
  parse_into(value, origin, n.nfc_);
  return n;
}

std::string Normalizer::apply(std::string_view text) const { return nfc_ ? utf8::nfc(text) : std::string(text); }

}  // namespace izwi
