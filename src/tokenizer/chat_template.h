#pragma once
// Chat prompt formats, rendered in C++ for the families izwi knows (no Jinja interpreter).

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "izwi/chat.h"

namespace izwi {

/// The family of a model folder: from the Jinja text of its chat_template when present, else
/// Mistral for tekken, else from the special tokens its vocabulary has.
std::optional<ChatTemplateFamily> detect_chat_family(const std::string& jinja, bool tekken,
                                                     const std::function<bool(std::string_view)>& has_token);

/// The prompt text. `bos` is put first where the format (or, for ChatML, the Jinja text) starts
/// with the BOS token. `inst_spaces` (Mistral only): "[INST] user [/INST]" rather than
/// "[INST]user[/INST]".
std::string render_chat(ChatTemplateFamily family, const std::vector<ChatMessage>& messages, const ChatOptions& options,
                        const std::string& bos, bool inst_spaces);

}  // namespace izwi
