#pragma once
// Tool calls as an output streams: each push rescans the text from the last settled point
// (call_scanner.h) and sends what the scan adds to the one before.

#include <string>
#include <string_view>
#include <vector>

#include "izwi/tool_calls.h"
#include "tool_calls/call_scanner.h"

namespace izwi::tool_calls {

class StreamParser {
 public:
  explicit StreamParser(CallSyntax syntax);

  ToolCallStreamDelta push(std::string_view text);
  ToolCallStreamDelta finish();

 private:
  ToolCallStreamDelta advance(bool final);

  CallSyntax syntax_;
  std::string text_;
  ScanCheckpoint checkpoint_;
  size_t content_sent_ = 0;
  std::vector<size_t> arguments_sent_;  ///< Per call announced: bytes of its arguments sent.
  bool finished_ = false;
};

}  // namespace izwi::tool_calls
