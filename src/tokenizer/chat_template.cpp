#include "tokenizer/chat_template.h"

#include "common/check.h"
#include "common/enum_names.h"

namespace izwi {
namespace {

// Jinja's `trim`: Python whitespace at both ends.
std::string trim(const std::string& s) {
  const char* ws = " \t\n\r\v\f";
  const size_t first = s.find_first_not_of(ws);
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(ws) - first + 1);
}

// ChatML (Qwen2/3, LFM2): any role; LFM2's template starts with its BOS, Qwen's has none.
std::string chatml(const std::vector<ChatMessage>& messages, const ChatOptions& options, const std::string& bos) {
  std::string out = bos;
  for (const ChatMessage& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  if (options.add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

// Llama 3 (Meta-Llama-3-*-Instruct): contents are trimmed, BOS first.
std::string llama3(const std::vector<ChatMessage>& messages, const ChatOptions& options, const std::string& bos) {
  std::string out = bos;
  for (const ChatMessage& m : messages) {
    out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
  }
  if (options.add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

// Mistral instruct: BOS, then "[INST] user [/INST]" and "assistant</s>" turns; a system
// message is prepended to the next user message. The [/INST] already prompts the assistant.
// Tekken-era templates (Mistral Nemo, mistral_common v3+) put no spaces inside [INST] ... [/INST].
std::string mistral(const std::vector<ChatMessage>& messages, const std::string& bos, bool inst_spaces) {
  const std::string open = inst_spaces ? "[INST] " : "[INST]", close = inst_spaces ? " [/INST]" : "[/INST]";
  std::string out = bos, system;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      system += (system.empty() ? "" : "\n\n") + m.content;
    } else if (m.role == "user") {
      out += open + (system.empty() ? "" : system + "\n\n") + m.content + close;
      system.clear();
    } else if (m.role == "assistant") {
      out += m.content + "</s>";
    } else {
      fail(ErrorCode::InvalidArgument,
           "chat message role '{}' is not supported by the Mistral format "
           "(system, user, assistant)",
           m.role);
    }
  }
  if (!system.empty()) fail(ErrorCode::InvalidArgument, "Mistral format: a system message must precede a user message");
  return out;
}

nlohmann::ordered_json parse_json(const std::string& text, const char* what) {
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::InvalidArgument, "chat {} is not valid JSON: {}", what, e.what());
  }
}

}  // namespace

jinja::ChatTemplateInputs chat_template_inputs(const std::vector<ChatMessage>& messages, const ChatOptions& options,
                                               const nlohmann::ordered_json& special_tokens) {
  jinja::ChatTemplateInputs in;
  for (const ChatMessage& m : messages) {
    nlohmann::ordered_json message = {{"role", m.role}, {"content", m.content}};
    if (!m.reasoning_content.empty()) message["reasoning_content"] = m.reasoning_content;
    if (!m.tool_calls.empty()) {
      message["tool_calls"] = parse_json(m.tool_calls, "message tool_calls");
      if (!message["tool_calls"].is_array()) {
        fail(ErrorCode::InvalidArgument, "chat message tool_calls must be a JSON array");
      }
    }
    if (!m.tool_call_id.empty()) message["tool_call_id"] = m.tool_call_id;
    if (!m.name.empty()) message["name"] = m.name;
    in.messages.push_back(std::move(message));
  }
  if (!options.tools.empty()) {
    in.tools = parse_json(options.tools, "tools");
    if (!in.tools.is_array() && !in.tools.is_null())
      fail(ErrorCode::InvalidArgument, "chat tools must be a JSON array");
  }
  if (!options.template_kwargs.empty()) {
    in.kwargs = parse_json(options.template_kwargs, "template_kwargs");
    if (!in.kwargs.is_object()) fail(ErrorCode::InvalidArgument, "chat template_kwargs must be a JSON object");
  }
  in.add_generation_prompt = options.add_generation_prompt;
  in.special_tokens = special_tokens;
  return in;
}

constexpr EnumName<ChatTemplateFamily> kChatTemplateFamilyNames[] = {
    {ChatTemplateFamily::ChatML, "ChatML"},
    {ChatTemplateFamily::Llama3, "Llama3"},
    {ChatTemplateFamily::Mistral, "Mistral"},
};
static_assert(enum_names_in_order(kChatTemplateFamilyNames));

const char* to_string(ChatTemplateFamily family) noexcept { return enum_name(kChatTemplateFamilyNames, family, "?"); }

std::optional<ChatTemplateFamily> detect_chat_family(const std::string& jinja, bool tekken,
                                                     const std::function<bool(std::string_view)>& has_token) {
  const auto from_markers = [](const std::function<bool(std::string_view)>& has) -> std::optional<ChatTemplateFamily> {
    if (has("<|im_start|>")) return ChatTemplateFamily::ChatML;
    if (has("<|start_header_id|>")) return ChatTemplateFamily::Llama3;
    if (has("[INST]")) return ChatTemplateFamily::Mistral;
    return std::nullopt;
  };
  if (!jinja.empty()) {
    return from_markers([&](std::string_view marker) { return jinja.find(marker) != std::string::npos; });
  }
  if (tekken) return ChatTemplateFamily::Mistral;
  return from_markers(has_token);
}

std::string render_chat(ChatTemplateFamily family, const std::vector<ChatMessage>& messages, const ChatOptions& options,
                        const std::string& bos, bool inst_spaces) {
  switch (family) {
    case ChatTemplateFamily::ChatML:
      return chatml(messages, options, bos);
    case ChatTemplateFamily::Llama3:
      return llama3(messages, options, bos);
    case ChatTemplateFamily::Mistral:
      return mistral(messages, bos, inst_spaces);
  }
  fail(ErrorCode::Internal, "unknown chat template family");
}

}  // namespace izwi
