#pragma once
/// @file chat.h
/// Chat messages and the prompt formats izwi renders for them.

#include <string>

#include "izwi/export.h"

namespace izwi {

/// One turn of a conversation: role is "system", "user", "assistant" (or another role the
/// model's format accepts), content is its text.
struct ChatMessage {
  std::string role;
  std::string content;
};

struct ChatOptions {
  bool add_generation_prompt = true;  ///< End with the header that starts the assistant's turn.
};

/// The prompt formats izwi renders (no Jinja interpreter: each family's format is built in).
enum class ChatTemplateFamily {
  ChatML,   ///< <|im_start|>role\ncontent<|im_end|>\n (Qwen2/3, LFM2)
  Llama3,   ///< <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
  Mistral,  ///< <s>[INST] user [/INST]assistant</s> (no spaces inside [INST]..[/INST] for tekken)
};

/// "ChatML", "Llama3" or "Mistral".
IZWI_API const char* to_string(ChatTemplateFamily family) noexcept;

}  // namespace izwi
