#include "tool_calls/call_scanner.h"

#include <optional>

#include "tool_calls/json_scan.h"

namespace izwi::tool_calls {

namespace {

constexpr std::string_view kHermesOpen = "<tool_call>";
constexpr std::string_view kHermesClose = "</tool_call>";
constexpr std::string_view kMistralOpen = "[TOOL_CALLS]";
constexpr std::string_view kMistralArgs = "[ARGS]";
constexpr std::string_view kMistralCallId = "[CALL_ID]";
constexpr std::string_view kPythonTag = "<|python_tag|>";

bool starts_with(std::string_view text, size_t pos, std::string_view prefix) {
  return text.size() >= pos && text.substr(pos).substr(0, prefix.size()) == prefix;
}

// The text from `pos` on is a proper prefix of `word` (more text may complete it).
bool is_partial(std::string_view text, size_t pos, std::string_view word) {
  const std::string_view rest = text.substr(pos);
  return rest.size() < word.size() && word.substr(0, rest.size()) == rest;
}

size_t trailing_whitespace(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && skip_whitespace(s, s.size() - n - 1) == s.size()) ++n;
  return n;
}

// The longest suffix of `s` that is a proper prefix of `word`.
size_t partial_suffix(std::string_view s, std::string_view word) {
  for (size_t n = std::min(s.size(), word.size() - 1); n > 0; --n) {
    if (s.substr(s.size() - n) == word.substr(0, n)) return n;
  }
  return 0;
}

ToolCall call_of(std::string_view text, const CallObjectScan& object) {
  ToolCall call{"", *object.name, ""};
  if (object.arguments_begin != std::string_view::npos) {
    call.arguments = std::string(text.substr(object.arguments_begin, object.arguments_end - object.arguments_begin));
  } else if (object.status == Scan::Complete) {
    call.arguments = "{}";  // a call of a function without parameters may leave them out
  }
  return call;
}

// One call block after its opening marker: Scan::Complete with `end` past it, Incomplete (the
// text ends inside it), or Invalid with `end` where scanning goes on as content. Calls are added
// to `calls` as soon as they are named.
struct BlockScan {
  Scan status;
  size_t end;
};

BlockScan hermes_block(std::string_view text, size_t pos, bool final, std::vector<ToolCall>& calls) {
  const size_t i = skip_whitespace(text, pos);
  if (i >= text.size()) return {Scan::Incomplete, text.size()};
  if (text[i] != '{') return {Scan::Invalid, i};
  const CallObjectScan object = scan_call_object(text, i, {"arguments", "parameters"});
  if (object.name) calls.push_back(call_of(text, object));
  if (object.status != Scan::Complete) return {object.status, object.end};
  const size_t close = skip_whitespace(text, object.end);
  if (starts_with(text, close, kHermesClose)) return {Scan::Complete, close + kHermesClose.size()};
  if (!final && is_partial(text, close, kHermesClose)) return {Scan::Incomplete, text.size()};
  return {Scan::Complete, object.end};  // no closing tag (some models end the turn right after the object)
}

BlockScan mistral_block(std::string_view text, size_t pos, bool /*final*/, std::vector<ToolCall>& calls) {
  size_t i = skip_whitespace(text, pos);
  if (i >= text.size()) return {Scan::Incomplete, text.size()};
  if (text[i] == '[') {  // Mistral Nemo: a JSON array of {"name", "arguments"}
    const CallArrayScan array = scan_call_array(
        text, i, {"arguments"}, [&](const CallObjectScan& object) { calls.push_back(call_of(text, object)); });
    return {array.status, array.end};
  }
  // Mistral Small 3.2, Devstral: name[CALL_ID]id[ARGS]{...} (the id optional).
  const size_t name_begin = i;
  while (i < text.size() && text[i] != '[') {
    const char c = text[i];
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return {Scan::Invalid, name_begin};
    ++i;
  }
  if (i >= text.size()) return {Scan::Incomplete, text.size()};
  if (i == name_begin) return {Scan::Invalid, name_begin};
  ToolCall call{"", std::string(text.substr(name_begin, i - name_begin)), ""};
  if (starts_with(text, i, kMistralCallId)) {
    const size_t id_begin = i + kMistralCallId.size();
    i = text.find('[', id_begin);
    if (i == std::string_view::npos) return {Scan::Incomplete, text.size()};
    call.id = std::string(text.substr(id_begin, i - id_begin));
  }
  if (!starts_with(text, i, kMistralArgs)) {
    if (is_partial(text, i, kMistralArgs) || is_partial(text, i, kMistralCallId))
      return {Scan::Incomplete, text.size()};
    return {Scan::Invalid, name_begin};
  }
  i = skip_whitespace(text, i + kMistralArgs.size());
  const ValueScan value = scan_json_value(text, i);
  call.arguments = std::string(text.substr(std::min(i, text.size()), value.end - std::min(i, text.size())));
  calls.push_back(std::move(call));
  return {value.status, value.end};
}

// Hermes and Mistral: content with call blocks, each opened by `open`, anywhere in it.
ScanResult scan_blocks(std::string_view text, bool final, ScanCheckpoint& cp, std::string_view open,
                       BlockScan (*block)(std::string_view, size_t, bool, std::vector<ToolCall>&)) {
  ScanResult r{"", cp.content_size, cp.calls};
  size_t i = cp.pos;
  const auto settle = [&](size_t pos) { cp = {pos, r.content_offset + r.content.size(), r.calls, false}; };
  while (true) {
    const size_t marker = text.find(open, i);
    if (marker == std::string_view::npos) {
      std::string_view segment = text.substr(i);
      if (final) {
        r.content += segment;
        return r;
      }
      // Held back: what may yet become a marker, and the whitespace before it (dropped if it does).
      segment.remove_suffix(partial_suffix(segment, open));
      segment.remove_suffix(trailing_whitespace(segment));
      r.content += segment;
      settle(i + segment.size());
      return r;
    }
    std::string_view before = text.substr(i, marker - i);
    const size_t space = trailing_whitespace(before);
    r.content += before.substr(0, before.size() - space);
    const size_t calls_before = r.calls.size();
    const BlockScan b = block(text, marker + open.size(), final, r.calls);
    const bool named = r.calls.size() > calls_before;
    if (b.status == Scan::Incomplete && (named || !final)) return r;
    if (!named && b.status != Scan::Complete) {  // only looked like a call
      r.content += text.substr(marker - space, space + open.size());
      i = marker + open.size();
    } else {
      i = b.status == Scan::Complete ? skip_whitespace(text, b.end) : b.end;
      if (i >= text.size() && !final) return r;  // whitespace after a call: dropped if nothing follows
    }
    if (!final) settle(i);
  }
}

// Llama 3: the whole output is call objects (`;` between them), after optional <|python_tag|>;
// any other output is content.
ScanResult scan_llama3(std::string_view text, bool final, ScanCheckpoint& cp) {
  ScanResult r;
  // Once the reply is known to be text, it stays text: later scans take only what is new.
  const auto rest_is_content = [&] {
    r.content = std::string(text.substr(cp.pos));
    r.content_offset = cp.content_size;
    cp = {text.size(), cp.content_size + r.content.size(), {}, true};
    return r;
  };
  if (cp.all_content) return rest_is_content();
  const auto all_content = [&] {
    if (!final) return rest_is_content();
    r.content = std::string(text);
    return r;
  };
  const size_t start = skip_whitespace(text, 0);
  size_t i = start;
  if (starts_with(text, i, kPythonTag)) {
    i = skip_whitespace(text, i + kPythonTag.size());
  } else if (i < text.size() && is_partial(text, i, kPythonTag)) {
    return final ? all_content() : r;
  }
  if (i >= text.size()) return final ? all_content() : r;
  if (text[i] != '{') return all_content();
  while (true) {
    const CallObjectScan object = scan_call_object(text, i, {"parameters", "arguments"});
    if (object.name) r.calls.push_back(call_of(text, object));
    if (r.calls.empty()) {
      if (object.status == Scan::Incomplete && !final) return r;
      return all_content();
    }
    if (object.status != Scan::Complete) {
      if (object.status == Scan::Invalid) r.content = std::string(text.substr(object.end));
      return r;
    }
    i = skip_whitespace(text, object.end);
    if (i < text.size() && text[i] == ';') i = skip_whitespace(text, i + 1);
    if (i >= text.size()) return r;
    if (text[i] != '{') {
      r.content = std::string(text.substr(i));
      return r;
    }
  }
}

// tool_choice "required" under constraint: the whole output is one JSON array of calls.
ScanResult scan_call_array_output(std::string_view text, bool final) {
  ScanResult r;
  const size_t i = skip_whitespace(text, 0);
  if (i >= text.size()) {
    if (final) r.content = std::string(text);
    return r;
  }
  if (text[i] != '[') {
    r.content = std::string(text);
    return r;
  }
  const CallArrayScan array = scan_call_array(text, i, {"parameters", "arguments"}, [&](const CallObjectScan& object) {
    r.calls.push_back(call_of(text, object));
  });
  if (r.calls.empty() && (array.status != Scan::Incomplete || final)) r.content = std::string(text);
  return r;
}

// A named function under constraint: the whole output is its arguments.
ScanResult scan_arguments_output(const std::string& function, std::string_view text) {
  const size_t i = skip_whitespace(text, 0);
  const ValueScan value = scan_json_value(text, i);
  const size_t end = value.status == Scan::Complete ? value.end : text.size();
  ScanResult r;
  r.calls.push_back({"", function, std::string(text.substr(std::min(i, text.size()), end - std::min(i, end)))});
  return r;
}

}  // namespace

CallSyntax CallSyntax::of(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::Llama3Json:
      return {Llama3Json, ""};
    case ToolCallFormat::Mistral:
      return {Mistral, ""};
    case ToolCallFormat::Hermes:
    default:
      return {Hermes, ""};
  }
}

ScanResult scan_tool_calls(const CallSyntax& syntax, std::string_view text, bool final, ScanCheckpoint* checkpoint) {
  ScanCheckpoint fresh;
  ScanCheckpoint& cp = checkpoint != nullptr ? *checkpoint : fresh;
  switch (syntax.kind) {
    case CallSyntax::Hermes:
      return scan_blocks(text, final, cp, kHermesOpen, hermes_block);
    case CallSyntax::Mistral:
      return scan_blocks(text, final, cp, kMistralOpen, mistral_block);
    case CallSyntax::Llama3Json:
      return scan_llama3(text, final, cp);
    case CallSyntax::CallArray:
      return scan_call_array_output(text, final);
    case CallSyntax::Arguments:
    default:
      return scan_arguments_output(syntax.function, text);
  }
}

}  // namespace izwi::tool_calls
