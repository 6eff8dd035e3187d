#include "tokenizer/decoder.h"

#include "common/check.h"
#include "tokenizer/json_input.h"

namespace izwi {

void check_decoder(const nlohmann::json& value, const std::string& origin) {
  const std::string type = component_type(value);
  if (type == "ByteLevel") return;
  if (type == "Sequence" && value.contains("decoders") && value["decoders"].is_array() && !value["decoders"].empty()) {
    for (const auto& step : value["decoders"]) check_decoder(step, origin);
    return;
  }
  fail(ErrorCode::Unsupported, "{}: decoder '{}' is not supported (supported: ByteLevel, Sequence of ByteLevel)",
       origin, type);
}

}  // namespace izwi
