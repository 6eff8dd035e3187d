#pragma once
// JSON helpers shared by the tokenizer file loaders.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace izwi {

/// Parses `text`; InvalidFormat naming `origin` on any JSON error (syntax, number out of range).
nlohmann::json parse_json_text(std::string_view text, const std::string& origin);

/// The "type" of a tokenizer.json component, or its JSON text when it has no string "type".
std::string component_type(const nlohmann::json& component);

}  // namespace izwi
