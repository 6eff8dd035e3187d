#include "tool_calls/json_scan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace izwi::tool_calls {

namespace {

bool is_whitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Characters of numbers and of true/false/null.
bool is_literal_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '+' || c == '.';
}

// The string starting at `pos` (at its quote).
ValueScan scan_string(std::string_view text, size_t pos) {
  for (size_t i = pos + 1; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      ++i;  // the escaped character; a bad escape is left to the decoder
    } else if (c == '"') {
      return {Scan::Complete, i + 1};
    } else if (c < 0x20) {
      return {Scan::Invalid, i};
    }
  }
  return {Scan::Incomplete, text.size()};
}

// A complete string token's value; none for an invalid escape.
std::optional<std::string> decode_string(std::string_view token) {
  const auto value = nlohmann::json::parse(token, nullptr, /*allow_exceptions=*/false);
  if (!value.is_string()) return std::nullopt;
  return value.get<std::string>();
}

}  // namespace

size_t skip_whitespace(std::string_view text, size_t pos) {
  while (pos < text.size() && is_whitespace(text[pos])) ++pos;
  return pos;
}

ValueScan scan_json_value(std::string_view text, size_t pos) {
  if (pos >= text.size()) return {Scan::Incomplete, text.size()};
  const char first = text[pos];
  if (first == '"') return scan_string(text, pos);
  if (first != '{' && first != '[') {
    size_t i = pos;
    while (i < text.size() && is_literal_char(text[i])) ++i;
    if (i == pos) return {Scan::Invalid, pos};
    return {i == text.size() ? Scan::Incomplete : Scan::Complete, i};
  }
  std::vector<char> closers;
  for (size_t i = pos; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const ValueScan s = scan_string(text, i);
      if (s.status != Scan::Complete) return s;
      i = s.end - 1;
    } else if (c == '{' || c == '[') {
      closers.push_back(c == '{' ? '}' : ']');
    } else if (c == '}' || c == ']') {
      if (c != closers.back()) return {Scan::Invalid, i};
      closers.pop_back();
      if (closers.empty()) return {Scan::Complete, i + 1};
    }
  }
  return {Scan::Incomplete, text.size()};
}

CallObjectScan scan_call_object(std::string_view text, size_t pos,
                                std::initializer_list<std::string_view> argument_keys) {
  CallObjectScan out;
  const auto stop = [&](Scan status, size_t at) {
    out.status = status;
    out.end = status == Scan::Incomplete ? text.size() : at;
    return out;
  };
  size_t i = skip_whitespace(text, pos + 1);
  if (i < text.size() && text[i] == '}') return stop(Scan::Invalid, i);  // {} names nothing
  while (true) {
    if (i >= text.size()) return stop(Scan::Incomplete, i);
    if (text[i] != '"') return stop(Scan::Invalid, i);
    const ValueScan key_scan = scan_string(text, i);
    if (key_scan.status != Scan::Complete) return stop(key_scan.status, key_scan.end);
    const std::optional<std::string> key = decode_string(text.substr(i, key_scan.end - i));
    if (!key) return stop(Scan::Invalid, i);
    i = skip_whitespace(text, key_scan.end);
    if (i >= text.size()) return stop(Scan::Incomplete, i);
    if (text[i] != ':') return stop(Scan::Invalid, i);
    i = skip_whitespace(text, i + 1);
    if (i >= text.size()) return stop(Scan::Incomplete, i);
    const bool is_arguments = out.arguments_begin == std::string_view::npos &&
                              std::find(argument_keys.begin(), argument_keys.end(), *key) != argument_keys.end();
    if (is_arguments) out.arguments_begin = i;
    const ValueScan value = scan_json_value(text, i);
    if (is_arguments) {
      out.arguments_end = value.end;
      out.arguments_complete = value.status == Scan::Complete;
    }
    if (value.status != Scan::Complete) return stop(value.status, value.end);
    if (*key == "name") {
      std::optional<std::string> name;
      if (text[i] == '"') name = decode_string(text.substr(i, value.end - i));
      if (!name || name->empty() || out.name) return stop(Scan::Invalid, i);
      out.name = std::move(name);
    }
    i = skip_whitespace(text, value.end);
    if (i >= text.size()) return stop(Scan::Incomplete, i);
    if (text[i] == '}') return out.name ? stop(Scan::Complete, i + 1) : stop(Scan::Invalid, i);
    if (text[i] != ',') return stop(Scan::Invalid, i);
    i = skip_whitespace(text, i + 1);
  }
}

}  // namespace izwi::tool_calls
