#pragma once
// Typed reads of a request body's fields: a missing or null field is std::nullopt, a field of the
// wrong type or out of range is a 400 naming it. And JSON written back to a client.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace izwi::server {

/// Deepest nesting of arrays and objects a request body may have: fields passed on unread
/// (`tools`, `tool_calls`, `chat_template_kwargs`) are dumped and rendered recursively later.
constexpr int kMaxJsonDepth = 128;

/// The body as a JSON object (400 for malformed JSON, another JSON type, or nesting deeper than
/// kMaxJsonDepth).
nlohmann::json parse_body(const std::string& body);

/// `value` as JSON text; invalid UTF-8 in its strings (an echoed path, file name or model text)
/// becomes U+FFFD instead of an exception.
std::string dump_json(const nlohmann::json& value);

std::optional<std::string> string_field(const nlohmann::json& body, const std::string& name);
std::optional<bool> bool_field(const nlohmann::json& body, const std::string& name);
/// A number in [min, max].
std::optional<double> number_field(const nlohmann::json& body, const std::string& name, double min, double max);
/// An integer in [min, max].
std::optional<int64_t> integer_field(const nlohmann::json& body, const std::string& name, int64_t min, int64_t max);
/// A required string field (400 when missing).
std::string required_string(const nlohmann::json& body, const std::string& name);
/// A string or an array of strings (OpenAI's `stop`), at most `max_items`.
std::vector<std::string> string_or_strings(const nlohmann::json& body, const std::string& name, size_t max_items);

}  // namespace izwi::server
