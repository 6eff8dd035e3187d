#pragma once
// A conversation in a JSON file, as OpenAI's API and transformers' apply_chat_template take it:
//   {"messages": [{"role": "user", "content": "..."}, ...], "tools": [...], "kwargs": {...}}
// "tools" (tool definitions) and "kwargs" (extra template variables, e.g. {"enable_thinking":
// false}) are optional. A message's content may be null (read as "") or a list of parts, whose
// "text" parts are joined; reasoning_content, tool_calls, tool_call_id and name are passed on.
// izwi-tokenize --chat, izwi-generate --messages and izwi-chat --messages read it.

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "izwi/chat.h"

namespace izwi::cli {

struct ChatFile {
  std::vector<ChatMessage> messages;
  ChatOptions options;
};

inline ChatFile read_chat_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot open chat file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(path + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("messages") || !doc["messages"].is_array()) {
    throw std::invalid_argument(path + ": expected {\"messages\": [...]}");
  }
  const auto string_field = [&](const nlohmann::ordered_json& m, const char* key, size_t i) -> std::string {
    if (!m.contains(key) || m[key].is_null()) return "";
    if (m[key].is_string()) return m[key].get<std::string>();
    throw std::invalid_argument(path + ": messages[" + std::to_string(i) + "]." + key + " is not a string");
  };
  ChatFile out;
  for (size_t i = 0; i < doc["messages"].size(); ++i) {
    const nlohmann::ordered_json& m = doc["messages"][i];
    if (!m.is_object()) throw std::invalid_argument(path + ": messages[" + std::to_string(i) + "] is not an object");
    ChatMessage message;
    message.role = string_field(m, "role", i);
    if (m.contains("content") && m["content"].is_array()) {
      for (const auto& part : m["content"]) {
        if (part.is_object() && part.value("type", "") == "text" && part.contains("text") && part["text"].is_string()) {
          message.content += part["text"].get<std::string>();
        }
      }
    } else {
      message.content = string_field(m, "content", i);
    }
    message.reasoning_content = string_field(m, "reasoning_content", i);
    if (m.contains("tool_calls") && !m["tool_calls"].is_null()) message.tool_calls = m["tool_calls"].dump();
    message.tool_call_id = string_field(m, "tool_call_id", i);
    message.name = string_field(m, "name", i);
    out.messages.push_back(std::move(message));
  }
  if (doc.contains("tools") && !doc["tools"].is_null()) out.options.tools = doc["tools"].dump();
  if (doc.contains("kwargs") && !doc["kwargs"].is_null()) out.options.template_kwargs = doc["kwargs"].dump();
  return out;
}

}  // namespace izwi::cli
