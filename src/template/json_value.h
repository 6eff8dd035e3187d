#pragma once
// JSON in and out of template values: messages and tools arrive as JSON; `tojson` is
// transformers' json.dumps(value, ensure_ascii=False, indent=indent, separators, sort_keys).

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "template/value.h"

namespace izwi::jinja {

/// A limit error (template/limits.h) for JSON nested deeper than kMaxValueDepth, checked on the way
/// down: a request's JSON may nest as deep as it likes.
Value from_json(const nlohmann::ordered_json& json);

struct JsonDumpOptions {
  std::optional<std::string> indent;  ///< absent: one line; else the indent unit
  std::optional<std::string> item_separator;
  std::optional<std::string> key_separator;
  bool sort_keys = false;
  bool ensure_ascii = false;
};

/// Python's json.dumps; EvalError for values JSON cannot hold (Undefined, macros).
std::string to_json(const Value& value, const JsonDumpOptions& options);

}  // namespace izwi::jinja
