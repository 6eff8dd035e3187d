#pragma once
// JSON Schema -> Grammar, compiled once per schema. Supported keywords: see docs/structured-outputs.md.
// Anything else throws Unsupported naming the keyword and where it is in the schema.

#include <cstddef>
#include <memory>

#include <nlohmann/json.hpp>

#include "structured/grammar.h"

namespace izwi::structured {

struct SchemaCompileOptions {
  /// Whitespace bytes allowed at each place JSON allows whitespace (between tokens, and before
  /// and after the document); 0 gives compact JSON.
  size_t max_whitespace = 16;
  /// Deepest nesting of subschemas (properties, items, anyOf, ...) walked while compiling.
  size_t max_depth = 32;
  /// Largest schema, as compact JSON text.
  size_t max_schema_bytes = 256 * 1024;
  /// Largest grammar (nodes); bounds what minLength/maxLength, minItems/maxItems and {m,n} expand to.
  size_t max_grammar_states = 500000;
};

/// The grammar of the JSON documents that validate against `schema`. Throws izwi::Error:
/// Unsupported (a keyword or construct outside the supported subset, named with its path, e.g.
/// "/properties/a/not"), InvalidArgument (malformed schema, a $ref that does not resolve, a
/// schema no value satisfies, or one over the limits above).
std::shared_ptr<const Grammar> compile_json_schema(const nlohmann::json& schema,
                                                   const SchemaCompileOptions& options = {});

/// The grammar of any JSON object (response_format {"type": "json_object"}).
std::shared_ptr<const Grammar> compile_any_json_object(const SchemaCompileOptions& options = {});

}  // namespace izwi::structured
