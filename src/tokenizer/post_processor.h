#pragma once
// tokenizer.json "post_processor": which ids encode(add_special_tokens=true) puts around the text.
// TemplateProcessing's single-sequence template (e.g. Llama 3's BOS), ByteLevel (no ids) and
// Sequence of them are supported.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace izwi {

struct PostProcessor {
  std::vector<int32_t> prefix;  ///< ids before the text
  std::vector<int32_t> suffix;  ///< ids after it

  /// Parses the "post_processor" value (null = none); Unsupported naming any other type.
  static PostProcessor from_json(const nlohmann::json& value, const std::string& origin);
};

}  // namespace izwi
