#pragma once
// Chat prompts: the model's own Jinja template when its folder has one (src/template), else the
// formats built in for the families izwi knows.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "izwi/chat.h"
#include "template/chat_template.h"

namespace izwi {

/// What transformers' apply_chat_template passes a template: the messages as dicts (fields left
/// out when empty; tool_calls parsed from JSON), tools and template_kwargs parsed from JSON (typed
/// InvalidArgument errors when malformed), the special tokens given.
jinja::ChatTemplateInputs chat_template_inputs(const std::vector<ChatMessage>& messages, const ChatOptions& options,
                                               const nlohmann::ordered_json& special_tokens);

/// The family of a model folder: from the Jinja text of its chat_template when present, else
/// Mistral for tekken, else from the special tokens its vocabulary has.
std::optional<ChatTemplateFamily> detect_chat_family(const std::string& jinja, bool tekken,
                                                     const std::function<bool(std::string_view)>& has_token);

/// The prompt text of a built-in format (folders without a template of their own). `bos` is put
/// first where the format starts with the BOS token (not ChatML). `inst_spaces` (Mistral only):
/// "[INST] user [/INST]" rather than "[INST]user[/INST]".
std::string render_chat(ChatTemplateFamily family, const std::vector<ChatMessage>& messages, const ChatOptions& options,
                        const std::string& bos, bool inst_spaces);

}  // namespace izwi
