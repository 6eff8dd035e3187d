#pragma once
// The tool-call formats as one scanner: the calls and the content of an output so far. Scanning
// text that is still growing (final = false) yields only what more text cannot change (content
// that cannot be part of a call, calls once named, the arguments text written so far), so each
// scan of a longer text extends the last one; the streaming parser sends the differences.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "izwi/tool_calls.h"

namespace izwi::tool_calls {

/// What text to expect: a model format, or one of the two shapes constrained decoding produces
/// for tool_choice "required" and a named function.
struct CallSyntax {
  enum Kind {
    Hermes,
    Llama3Json,
    Mistral,
    CallArray,  ///< The whole output is `[{"name": ..., "parameters": {...}}, ...]`.
    Arguments,  ///< The whole output is the arguments object of the function `function`.
  };
  Kind kind = Hermes;
  std::string function;  ///< Arguments: the function's name.

  static CallSyntax of(ToolCallFormat format);
};

struct ScanResult {
  /// The content from byte `content_offset` of the whole content on (a scan resumed from a
  /// checkpoint leaves out what was settled before it: long replies are not copied per token).
  std::string content;
  size_t content_offset = 0;
  std::vector<ToolCall> calls;
};

/// Where a scan of a growing text may resume: everything before `pos` is settled into
/// `content_size` bytes of content and `calls`; with `all_content`, everything from `pos` on is
/// content too.
struct ScanCheckpoint {
  size_t pos = 0;
  size_t content_size = 0;
  std::vector<ToolCall> calls;
  bool all_content = false;
};

/// Scans `text` (final: the whole output). With a checkpoint (from earlier scans of a prefix of
/// `text`, with final = false) the scan resumes from it and moves it forward.
ScanResult scan_tool_calls(const CallSyntax& syntax, std::string_view text, bool final,
                           ScanCheckpoint* checkpoint = nullptr);

}  // namespace izwi::tool_calls
