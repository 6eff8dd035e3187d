#pragma once
// A JSON scanner for text that may still be growing: it tells a complete value from one cut short
// (more text may complete it) from one that can never be valid, without parsing numbers or
// building values. The tool-call parsers use it to find where a call object and its arguments end
// while the output streams.

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace izwi::tool_calls {

enum class Scan { Complete, Incomplete, Invalid };

struct ValueScan {
  Scan status = Scan::Invalid;
  size_t end = 0;  ///< Complete: just past the value; Incomplete: the text's end; Invalid: where it failed.
};

/// Past the JSON whitespace (space, tab, newline, CR) at `pos`.
size_t skip_whitespace(std::string_view text, size_t pos);

/// The JSON value starting at `pos` (no leading whitespace). Checks strings' escapes and control
/// characters and the nesting of brackets; numbers and literals are taken as runs of their
/// characters (a literal ends only at a character that cannot continue it, so one at the text's
/// end is Incomplete).
ValueScan scan_json_value(std::string_view text, size_t pos);

/// A call object `{"name": "...", <arguments key>: {...}, ...}` starting at `pos` (at its '{').
/// The name is set once its string is complete, even if the object later turns out invalid;
/// `arguments_*` delimit the raw text of the first value under one of `argument_keys`, as far as
/// it goes.
struct CallObjectScan {
  Scan status = Scan::Invalid;
  size_t end = 0;  ///< As ValueScan::end.
  std::optional<std::string> name;
  size_t arguments_begin = std::string_view::npos;
  size_t arguments_end = std::string_view::npos;
  bool arguments_complete = false;
};
CallObjectScan scan_call_object(std::string_view text, size_t pos,
                                std::initializer_list<std::string_view> argument_keys);

/// `[` call objects `,`-separated `]` starting at `pos` (at its '['), each scanned as
/// scan_call_object; `on_call` gets each named one as it is found (in order).
struct CallArrayScan {
  Scan status = Scan::Invalid;
  size_t end = 0;
};
template <typename OnCall>
CallArrayScan scan_call_array(std::string_view text, size_t pos, std::initializer_list<std::string_view> argument_keys,
                              OnCall&& on_call) {
  size_t i = skip_whitespace(text, pos + 1);
  bool any = false;
  while (true) {
    if (i >= text.size()) return {Scan::Incomplete, text.size()};
    if (text[i] != '{') return {Scan::Invalid, i};
    const CallObjectScan object = scan_call_object(text, i, argument_keys);
    if (object.name) {
      on_call(object);
      any = true;
    }
    if (object.status != Scan::Complete) return {object.status, object.end};
    i = skip_whitespace(text, object.end);
    if (i >= text.size()) return {Scan::Incomplete, text.size()};
    if (text[i] == ']') return {any ? Scan::Complete : Scan::Invalid, i + 1};
    if (text[i] != ',') return {Scan::Invalid, i};
    i = skip_whitespace(text, i + 1);
  }
}

}  // namespace izwi::tool_calls
