#include "tool_calls/stream_parser.h"

#include "common/check.h"

namespace izwi::tool_calls {

StreamParser::StreamParser(CallSyntax syntax) : syntax_(std::move(syntax)) {}

ToolCallStreamDelta StreamParser::push(std::string_view text) {
  if (finished_) return {};
  text_ += text;
  return advance(false);
}

ToolCallStreamDelta StreamParser::finish() {
  if (finished_) return {};
  finished_ = true;
  return advance(true);
}

ToolCallStreamDelta StreamParser::advance(bool final) {
  const ScanResult scan = scan_tool_calls(syntax_, text_, final, &checkpoint_);
  ToolCallStreamDelta delta;
  // Each scan extends the last (call_scanner.h); a violation is a bug in a format's scanner.
  const size_t content_end = scan.content_offset + scan.content.size();
  IZWI_CHECK(scan.content_offset <= content_sent_ && content_end >= content_sent_ &&
                 scan.calls.size() >= arguments_sent_.size(),
             "tool-call scan shrank");
  delta.content = scan.content.substr(content_sent_ - scan.content_offset);
  content_sent_ = content_end;
  for (size_t k = 0; k < scan.calls.size(); ++k) {
    const ToolCall& call = scan.calls[k];
    const auto index = static_cast<int32_t>(k);
    if (k == arguments_sent_.size()) {
      delta.calls.push_back({index, true, call.id, call.name, call.arguments});
      arguments_sent_.push_back(call.arguments.size());
    } else if (call.arguments.size() > arguments_sent_[k]) {
      delta.calls.push_back({index, false, "", "", call.arguments.substr(arguments_sent_[k])});
      arguments_sent_[k] = call.arguments.size();
    }
  }
  return delta;
}

}  // namespace izwi::tool_calls
