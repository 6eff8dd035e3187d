#pragma once
// JSON helpers shared by the tokenizer file loaders. Every JSON file the tokenizer reads goes
// through parse_json_text, which bounds the nesting depth before any DOM is built (common/json_fields).

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace izwi {

[[noreturn]] void throw_invalid_format(const std::string& origin, const std::string& what);

/// Parses `text`; InvalidFormat naming `origin` on any JSON error (syntax, number out of range,
/// nesting deeper than kMaxJsonDepth).
nlohmann::json parse_json_text(std::string_view text, const std::string& origin);

/// The bytes of the file at `path`; NotFound if it cannot be opened, InvalidFormat if it is not a
/// regular file (a FIFO would block), ResourceExhausted above 64 MiB.
std::string read_text_file(const std::string& path);

/// parse_json_text(read_text_file(path), path).
nlohmann::json read_json(const std::string& path);

/// read(parse_json_text(text, origin)), where a value of an unexpected JSON type met anywhere
/// while reading is InvalidFormat naming `origin` too.
template <typename Read>
auto read_json_text(std::string_view text, const std::string& origin, Read&& read) {
  const nlohmann::json doc = parse_json_text(text, origin);
  try {
    return read(doc);
  } catch (const nlohmann::json::exception& e) {
    throw_invalid_format(origin, e.what());
  }
}

/// The "type" of a tokenizer.json component, or its JSON text when it has no string "type".
std::string component_type(const nlohmann::json& component);

}  // namespace izwi
