#pragma once
/// @file chat.h
/// Chat messages and the prompt formats izwi renders for them.

#include <string>

#include "izwi/export.h"

namespace izwi {

/// One turn of a conversation. The fields after `content` are what chat templates read besides
/// (OpenAI's message fields); an empty one is left out of the message the template sees.
struct ChatMessage {
  std::string role;               ///< "system", "user", "assistant", "tool", or another role the template accepts.
  std::string content;            ///< The turn's text.
  std::string reasoning_content;  ///< An assistant turn's thinking (Qwen3, DeepSeek R1 templates).
  /// An assistant turn's tool calls: JSON array text, e.g.
  /// [{"type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}].
  std::string tool_calls;
  std::string tool_call_id;  ///< A tool result: the id of the call it answers.
  std::string name;          ///< A tool result: the tool's name.
};

/// How a conversation is rendered into a prompt besides its messages.
struct ChatOptions {
  bool add_generation_prompt = true;  ///< End with the header that starts the assistant's turn.
  /// Tool definitions the template lists: JSON array text ("" = none; the template sees `tools` as none).
  std::string tools;
  /// Extra template variables: JSON object text, e.g. {"enable_thinking": false} ("" = none), as
  /// transformers' apply_chat_template(**kwargs) passes them.
  std::string template_kwargs;
};

/// The prompt formats izwi renders for model folders without a chat template of their own (a
/// folder's Jinja template, when it has one, is rendered instead; see docs/chat_templates.md).
enum class ChatTemplateFamily {
  ChatML,   ///< `<|im_start|>role\ncontent<|im_end|>\n` (Qwen2/3, LFM2)
  Llama3,   ///< `<|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>`
  Mistral,  ///< `<s>[INST] user [/INST]assistant</s>` (no spaces inside [INST]..[/INST] for tekken)
};

/// "ChatML", "Llama3" or "Mistral".
IZWI_API const char* to_string(ChatTemplateFamily family) noexcept;

}  // namespace izwi
