// The public face of src/tool_calls/ (include/izwi/tool_calls.h).

#include "izwi/tool_calls.h"

#include "tool_calls/call_scanner.h"
#include "tool_calls/stream_parser.h"

namespace izwi {

const char* to_string(ToolCallFormat format) noexcept {
  switch (format) {
    case ToolCallFormat::Hermes:
      return "hermes";
    case ToolCallFormat::Llama3Json:
      return "llama3_json";
    case ToolCallFormat::Mistral:
      return "mistral";
  }
  return "unknown";
}

std::optional<ToolCallFormat> tool_call_format_from_string(std::string_view name) noexcept {
  for (const ToolCallFormat f : {ToolCallFormat::Hermes, ToolCallFormat::Llama3Json, ToolCallFormat::Mistral}) {
    if (name == to_string(f)) return f;
  }
  return std::nullopt;
}

std::optional<ToolCallFormat> detect_tool_call_format(const Tokenizer& tokenizer) {
  const std::string& source = tokenizer.chat_template();
  const auto has = [&](std::string_view marker) { return source.find(marker) != std::string::npos; };
  // Hermes first: Hermes 2 Pro's template is a Llama 3 one that also describes "parameters".
  if (has("<tool_call>")) return ToolCallFormat::Hermes;
  if (has("[TOOL_CALLS]")) return ToolCallFormat::Mistral;
  if (has("\"parameters\"") && (has("<|start_header_id|>") || has("<|python_tag|>"))) {
    return ToolCallFormat::Llama3Json;
  }
  if (!source.empty()) return std::nullopt;  // a template of its own that asks for none of these
  const std::optional<ChatTemplateFamily> family = tokenizer.chat_template_family();
  if (!family) return std::nullopt;
  switch (*family) {
    case ChatTemplateFamily::Llama3:
      return ToolCallFormat::Llama3Json;
    case ChatTemplateFamily::Mistral:
      return ToolCallFormat::Mistral;
    case ChatTemplateFamily::ChatML:
      return ToolCallFormat::Hermes;
  }
  return std::nullopt;
}

std::vector<std::string> tool_call_markers(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::Hermes:
      return {"<tool_call>", "</tool_call>"};
    case ToolCallFormat::Llama3Json:
      return {"<|python_tag|>"};
    case ToolCallFormat::Mistral:
      return {"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"};
  }
  return {};
}

ParsedToolCalls parse_tool_calls(ToolCallFormat format, std::string_view text) {
  tool_calls::ScanResult scan = tool_calls::scan_tool_calls(tool_calls::CallSyntax::of(format), text, /*final=*/true);
  return {std::move(scan.content), std::move(scan.calls)};
}

struct ToolCallStreamParser::Impl {
  tool_calls::StreamParser parser;
};

ToolCallStreamParser::ToolCallStreamParser(ToolCallFormat format)
    : impl_(std::make_unique<Impl>(Impl{tool_calls::StreamParser(tool_calls::CallSyntax::of(format))})) {}
ToolCallStreamParser::~ToolCallStreamParser() = default;
ToolCallStreamParser::ToolCallStreamParser(ToolCallStreamParser&&) noexcept = default;
ToolCallStreamParser& ToolCallStreamParser::operator=(ToolCallStreamParser&&) noexcept = default;

ToolCallStreamDelta ToolCallStreamParser::push(std::string_view text) { return impl_->parser.push(text); }
ToolCallStreamDelta ToolCallStreamParser::finish() { return impl_->parser.finish(); }

}  // namespace izwi
