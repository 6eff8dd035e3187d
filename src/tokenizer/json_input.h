#pragma once
// JSON helpers shared by the tokenizer file loaders. Every JSON file the tokenizer reads goes
// through parse_json_text, which bounds the nesting depth before any DOM is built.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace izwi {

/// Deepest nesting of arrays/objects accepted in a tokenizer JSON file. Real files nest a
/// handful of levels; nlohmann copies and dumps values recursively, so a file nested tens of
/// thousands of levels deep would otherwise overflow the stack.
constexpr int kMaxJsonDepth = 512;

[[noreturn]] void throw_invalid_format(const std::string& origin, const std::string& what);

/// The deepest nesting of '[' / '{' outside strings in `text` (a cheap scan; the text need not
/// be valid JSON).
int json_nesting_depth(std::string_view text);

/// Parses `text`; InvalidFormat naming `origin` on any JSON error (syntax, number out of range,
/// nesting deeper than kMaxJsonDepth).
nlohmann::json parse_json_text(std::string_view text, const std::string& origin);

/// The bytes of the file at `path`; NotFound if it cannot be opened.
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
