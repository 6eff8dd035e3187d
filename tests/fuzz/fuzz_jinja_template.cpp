// Fuzz target: arbitrary bytes as a chat template (src/template: lexer, parser, interpreter),
// parsed and, when it parses, rendered with a small conversation, tools and keyword arguments,
// with and without the generation prompt. Each step either succeeds or raises izwi::Error; a
// crash, hang or sanitizer report is a bug.

#include <cstdint>
#include <string>

#include "izwi/errors.h"
#include "template/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nlohmann::ordered_json kMessages = nlohmann::ordered_json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Zürich?"},
    {"role": "assistant", "content": "", "reasoning_content": "Call the tool.", "tool_calls": [
      {"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich"}}}]},
    {"role": "tool", "content": "{\"temperature\": 21.5}", "tool_call_id": "call12345"},
    {"role": "assistant", "content": "<think>\nok\n</think>\n\n21.5 °C"}])");
  static const nlohmann::ordered_json kTools = nlohmann::ordered_json::parse(
      R"([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}])");
  const std::string source(reinterpret_cast<const char*>(data), size);
  try {
    const izwi::jinja::ChatTemplate tmpl(source, "fuzz.jinja");
    for (const bool generation_prompt : {false, true}) {
      izwi::jinja::ChatTemplateInputs in;
      in.messages = kMessages;
      in.tools = generation_prompt ? kTools : nlohmann::ordered_json();
      in.add_generation_prompt = generation_prompt;
      in.special_tokens = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
      in.kwargs = {{"enable_thinking", generation_prompt}};
      try {
        tmpl.render(in);
      } catch (const izwi::Error&) {
      }
    }
  } catch (const izwi::Error&) {
  }
  return 0;
}
