#pragma once
/// @file tool_calls.h
/// Tool calls in a model's output text: the formats chat templates ask models to write them in,
/// parsed whole or as the text streams (see docs/serving.md, "Tool calls").

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "izwi/export.h"
#include "izwi/tokenizer.h"

namespace izwi {

/// How a model family writes tool calls.
enum class ToolCallFormat {
  Hermes,      ///< `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, one block per call (Qwen2.5/3, Hermes)
  Llama3Json,  ///< `{"name": ..., "parameters": {...}}` as the whole output, optionally after `<|python_tag|>`, `;`
               ///< between calls
  Mistral,     ///< `[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`, or `[TOOL_CALLS]name[ARGS]{...}` per call
};

/// vLLM's names for the formats: "hermes", "llama3_json", "mistral".
IZWI_API const char* to_string(ToolCallFormat format) noexcept;
/// The format named as to_string() names it; none for another name.
IZWI_API std::optional<ToolCallFormat> tool_call_format_from_string(std::string_view name) noexcept;
/// The format a tokenizer's chat template asks for: from the markers its Jinja template writes
/// (`<tool_call>`, `[TOOL_CALLS]`, `"parameters"` in a Llama 3 template), else from its built-in
/// family (ChatML: Hermes, Llama3: Llama3Json, Mistral: Mistral); none when neither tells.
IZWI_API std::optional<ToolCallFormat> detect_tool_call_format(const Tokenizer& tokenizer);
/// The strings that open a call in `format` (e.g. "<tool_call>"); where a tokenizer makes one a
/// special token, the text parsed must keep it (decode without skipping it).
IZWI_API std::vector<std::string> tool_call_markers(ToolCallFormat format);

/// One call: `arguments` is the JSON text the model wrote for them (as written, whitespace
/// included; may be cut short when generation stopped inside it). `id` is the model's own when it
/// writes one before the arguments (Mistral's [CALL_ID]), else empty: callers assign ids.
struct ToolCall {
  std::string id;         ///< The model's id for the call, or "".
  std::string name;       ///< The function called.
  std::string arguments;  ///< The arguments' JSON text.
};

/// A model's output split into its text and its calls.
struct ParsedToolCalls {
  std::string content;          ///< The text outside the calls (whitespace around calls dropped).
  std::vector<ToolCall> calls;  ///< In the order written; empty when the output holds none.
};

/// Parses a whole output. Text that only looks like a call (a marker followed by no valid call
/// object) stays in `content`; a call whose name was written is kept even if its arguments were
/// cut short, as the streaming parser has already announced it.
IZWI_API ParsedToolCalls parse_tool_calls(ToolCallFormat format, std::string_view text);

/// A piece of one call as OpenAI streams `delta.tool_calls`: the first piece of a call carries
/// its index, id (possibly empty) and name; later ones only the index and more argument text.
struct ToolCallDelta {
  int32_t index = 0;      ///< The call's place in the output, 0 first.
  bool first = false;     ///< The call's first piece (id and name are set).
  std::string id;         ///< With `first`: the model's id for the call, or "".
  std::string name;       ///< With `first`: the function called.
  std::string arguments;  ///< The next fragment of the arguments' JSON text.
};

/// What one push of text adds: more content, pieces of calls, or both (content comes first).
struct ToolCallStreamDelta {
  std::string content;               ///< More text outside the calls.
  std::vector<ToolCallDelta> calls;  ///< Pieces of calls, in order.
  /// Nothing was added.
  bool empty() const { return content.empty() && calls.empty(); }
};

/// Parses an output as it streams. Text that may still turn out to be part of a call (a prefix
/// of a marker, a call not yet named) is held back; nothing emitted is ever retracted. The
/// concatenated content and each call's concatenated arguments equal parse_tool_calls() of the
/// whole text. Use from one thread at a time.
class IZWI_API ToolCallStreamParser {
 public:
  /// A parser of outputs written in `format`.
  explicit ToolCallStreamParser(ToolCallFormat format);
  ~ToolCallStreamParser();
  /// Moves the parse so far.
  ToolCallStreamParser(ToolCallStreamParser&&) noexcept;
  /// Moves the parse so far.
  ToolCallStreamParser& operator=(ToolCallStreamParser&&) noexcept;

  /// Appends `text` (any split, even inside a marker or a UTF-8 character).
  ToolCallStreamDelta push(std::string_view text);
  /// The end of the output: whatever was held back.
  ToolCallStreamDelta finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace izwi
