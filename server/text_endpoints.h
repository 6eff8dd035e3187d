#pragma once
// POST /v1/completions and /v1/chat/completions: OpenAI's request fields to an izwi::Request,
// and the engine's output to OpenAI's response and server-sent event shapes.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "izwi/output.h"
#include "izwi/request.h"
#include "server/served_models.h"

namespace izwi::server {

struct TextJob {
  ServedModel* model = nullptr;
  bool chat = false;  ///< /v1/chat/completions (else /v1/completions)
  bool stream = false;
  bool include_usage = false;  ///< stream_options.include_usage
  bool echo = false;           ///< completions: the prompt text before the answer
  std::string prompt_text;     ///< for echo
  Request request;             ///< prompt resolved to ids
  std::string id;              ///< "chatcmpl-..." / "cmpl-..."
  int64_t created = 0;
  int32_t prompt_tokens() const { return static_cast<int32_t>(request.prompt_ids.size()); }
};

/// 400 naming the parameter for a bad field; 404 for an unknown model.
TextJob parse_text_request(const nlohmann::json& body, const ServedModels& models, bool chat);

/// OpenAI's finish_reason: "stop" (EOS or a stop string/id), "length", or "abort".
nlohmann::json finish_reason_json(FinishReason reason);

/// The whole answer (stream = false).
nlohmann::json text_response(const TextJob& job, const Output& output);
/// One server-sent event's JSON: a text delta (chat: `delta.content`; the first also carries the
/// role), and the finish reason in the last.
nlohmann::json text_chunk(const TextJob& job, const std::string& delta, FinishReason finish, bool first);
/// The last event when include_usage is set: no choices, the usage.
nlohmann::json usage_chunk(const TextJob& job, int32_t completion_tokens);

}  // namespace izwi::server
