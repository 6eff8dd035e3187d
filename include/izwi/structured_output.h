#pragma once
/// @file structured_output.h
/// Constrained decoding: a request whose output must be JSON (docs/structured-outputs.md).

#include <string>

#include "izwi/export.h"

namespace izwi {

/// What a request's output must be. Each step the vocabulary is masked to the tokens that can
/// still lead to a valid document, and the output can end (an EOS or stop id) only once the
/// document is complete; max_tokens reached before that finishes with FinishReason::Length.
/// Needs a model folder with a tokenizer. Checked at submit: a schema keyword outside the
/// supported subset is Unsupported, a malformed, too large (256 KiB as compact JSON) or too deep
/// (32 nested subschemas) schema InvalidArgument, each naming the keyword or the limit.
struct StructuredOutput {
  /// The kinds of constraint.
  enum class Kind {
    None,        ///< Free text.
    JsonObject,  ///< Any JSON object (OpenAI's response_format {"type": "json_object"}).
    JsonSchema,  ///< A JSON document that validates against `json_schema`.
  };
  Kind kind = Kind::None;  ///< What the output must be.
  /// With Kind::JsonSchema: the JSON Schema, as JSON text. Schemas equal as compact JSON share
  /// one compiled grammar (cached per engine).
  std::string json_schema;
};

/// Throws what submitting a request with `output` would for the schema itself (Unsupported or
/// InvalidArgument naming params.structured_output.json_schema and the keyword), without a model:
/// a server checks a client's schema with it before anything is queued.
IZWI_API void validate_structured_output(const StructuredOutput& output);

}  // namespace izwi
