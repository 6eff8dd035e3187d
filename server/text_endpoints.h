#pragma once
// POST /v1/completions and /v1/chat/completions: OpenAI's request fields to an izwi::Request,
// and the engine's output to OpenAI's response and server-sent event shapes.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "izwi/output.h"
#include "izwi/request.h"
#include "server/served_models.h"

namespace izwi::server {

class ChatToolCalls;

struct TextJob {
  ServedModel* model = nullptr;
  bool chat = false;  ///< /v1/chat/completions (else /v1/completions)
  bool stream = false;
  bool include_usage = false;  ///< stream_options.include_usage
  bool echo = false;           ///< completions: the prompt text before the answer
  std::string prompt_text;     ///< for echo
  /// Completions from a model without a tokenizer: each token is rendered as "token_id:N" (as
  /// vLLM's return_tokens_as_token_ids does) and the choices carry the ids as `token_ids`.
  bool ids_as_text = false;
  /// The choices carry `logprobs` (completions: `logprobs` given; chat: `logprobs: true`); with
  /// echo the prompt's come first.
  bool logprobs = false;
  /// Completions' text_offset of each choice's next token (advanced as chunks go out).
  std::vector<int64_t> text_offsets = {0};
  /// Chat with tools to call: the output's calls are parsed into tool_calls (chat_tools.h).
  std::shared_ptr<ChatToolCalls> tools;
  Request request;  ///< prompt resolved to ids
  std::string id;   ///< "chatcmpl-..." / "cmpl-..."
  int64_t created = 0;
  int32_t prompt_tokens() const { return static_cast<int32_t>(request.prompt_ids.size()); }
};

/// 400 naming the parameter for a bad field; 404 for an unknown model.
TextJob parse_text_request(const nlohmann::json& body, const ServedModels& models, bool chat);

/// OpenAI's finish_reason: "stop" (EOS or a stop string/id), "length", or "abort".
nlohmann::json finish_reason_json(FinishReason reason);

/// "token_id:N" for each id, concatenated (the text of a completion when ids_as_text).
std::string token_ids_text(const std::vector<int32_t>& ids);

/// The whole answer (stream = false): output.text, or output.tokens when job.ids_as_text, with
/// output.logprobs (and prompt_logprobs) when job.logprobs; one choice per output.choices (n > 1).
nlohmann::json text_response(TextJob& job, const Output& output);
/// One server-sent event's JSON for `chunk`: a text delta of the choice chunk.index (chat:
/// `delta.content`; the choice's first also carries the role) with its tokens' logprobs, and the
/// finish reason in the choice's last.
nlohmann::json text_chunk(TextJob& job, const StreamChunk& chunk, bool first);
/// The last event when include_usage is set: no choices, the usage (completion tokens of all choices).
nlohmann::json usage_chunk(const TextJob& job, int32_t completion_tokens);

}  // namespace izwi::server
