#pragma once
// OpenAI's `response_format` on /v1/chat/completions and /v1/completions, as the engine's
// StructuredOutput (docs/serving.md): {"type": "text"}, {"type": "json_object"}, or
// {"type": "json_schema", "json_schema": {"name", "schema", "strict", "description"}}.

#include <nlohmann/json.hpp>

#include "izwi/request.h"

namespace izwi::server {

/// The body's response_format (free text when absent). Anything else (another type, an unknown
/// key, a schema keyword the engine does not enforce, a schema too large or too deep, a model
/// without a tokenizer, ignore_eos beside it, vLLM's guided_* fields) is a 400 naming the field:
/// a format the server cannot guarantee is never dropped silently.
StructuredOutput parse_response_format(const nlohmann::json& body, const GenerationParams& params, bool has_tokenizer);

}  // namespace izwi::server
