#pragma once
// OpenAI's tools on /v1/chat/completions (docs/serving.md, "Tool calls"): `tools`, `tool_choice`
// (auto, none, required, or a named function), `parallel_tool_calls`, assistant turns' own
// `tool_calls` sent back, and the model's calls parsed out of its output (src/tool_calls/) into
// message.tool_calls and streamed delta.tool_calls.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/text_stream.h"
#include "izwi/output.h"
#include "izwi/request.h"
#include "izwi/tool_calls.h"
#include "server/served_models.h"
#include "tool_calls/stream_parser.h"

namespace izwi::server {

/// The tool calls of one chat request's output: its text is parsed as the model's format (tool_choice
/// auto), or, for `required` and a named function, as the JSON the request's constraint makes the
/// model write (an array of {"name", "parameters"}, or the function's arguments). Each choice (n)
/// is parsed on its own, by its index.
class ChatToolCalls {
 public:
  /// The request's tools and tool_choice: a 400 naming the field for malformed ones; none when
  /// the output is not to be parsed (no tools, or tool_choice none). For required and a named
  /// function, sets params.structured_output to the schema of a valid call (a 400 naming the
  /// function's parameters when the engine cannot enforce them, or beside response_format).
  static std::shared_ptr<ChatToolCalls> from_request(const nlohmann::json& body, const ServedModel& model,
                                                     GenerationParams& params);

  /// The whole answer of choice `index` for its generated ids: sets message.content (null when
  /// the answer is only calls) and message.tool_calls (when there are calls).
  void answer(int32_t index, const std::vector<int32_t>& tokens, nlohmann::json& message);
  /// A streamed chunk's delta for choice `index` and its ids (`finished`: its last): `content`
  /// when more text is final, `tool_calls` pieces as OpenAI streams them (the first of a call:
  /// index, id, type, function.name and arguments; then index and more function.arguments).
  nlohmann::json delta(int32_t index, const std::vector<int32_t>& tokens, bool finished);
  /// Whether choice `index` held a call (finish_reason "tool_calls" instead of "stop").
  bool called(int32_t index);

 private:
  struct Choice {
    TextStream text;  ///< the output's text, with the format's markers kept when they are special
    tool_calls::StreamParser parser;
    std::vector<std::string> ids;  ///< per call announced
  };
  ChatToolCalls(const Tokenizer& tokenizer, tool_calls::CallSyntax syntax, bool parallel, std::vector<std::string> stop,
                bool mistral_ids);
  Choice& choice(int32_t index);
  std::string text_of(Choice& c, const std::vector<int32_t>& tokens, bool finished);
  const std::string& id_of(Choice& c, size_t call, const std::string& own);

  Tokenizer tokenizer_;
  tool_calls::CallSyntax syntax_;
  bool parallel_;  ///< parallel_tool_calls: all calls (else the first only)
  std::vector<std::string> stop_;
  bool mistral_ids_;  ///< ids of 9 letters and digits (Mistral's templates accept no others)
  std::vector<int32_t> marker_ids_;
  std::vector<Choice> choices_;
};

/// messages[index].tool_calls as a template reads them (JSON text): OpenAI sends each call's
/// `arguments` as a JSON string; templates print them as objects (`arguments | tojson`), so a
/// string holding a JSON object is parsed. A 400 naming the call's field when malformed.
std::string assistant_tool_calls(const nlohmann::json& calls, size_t index);

}  // namespace izwi::server
