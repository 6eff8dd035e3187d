#include "tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/check.h"
#include "common/json_fields.h"

namespace izwi {
namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof(buffer));
  return reinterpret_cast<const char*>(buffer);
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};

}  // namespace

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  bool jit = false;
  std::string origin;
  std::string pattern;
  ~Compiled() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern, bool literal, const std::string& origin) : compiled_(new Compiled) {
  compiled_->origin = origin;
  compiled_->pattern = pattern;
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  // PCRE2 refuses UCP together with LITERAL (a literal has no character classes anyway).
  const uint32_t options = PCRE2_UTF | PCRE2_NO_UTF_CHECK | (literal ? PCRE2_LITERAL : PCRE2_UCP);
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &error,
                                  &error_offset, nullptr);
  if (compiled_->code == nullptr) {
    fail(ErrorCode::InvalidFormat, "{}: regex '{}' does not compile at offset {}: {}", origin, pattern, error_offset,
         pcre2_message(error));
  }
  // Without JIT support (some platforms) the interpreter gives the same matches, slower.
  compiled_->jit = pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() = default;

template <typename OnMatch>
void Regex::for_each_match(std::string_view text, OnMatch&& on_match) const {
  // One match block per thread: PCRE2 writes each match into it.
  thread_local std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(pcre2_match_data_create(1, nullptr));
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t offset = 0;
  while (offset <= text.size()) {
    int rc = compiled_->jit ? pcre2_jit_match(compiled_->code, subject, text.size(), offset, 0, match.get(), nullptr)
                            : PCRE2_ERROR_JIT_STACKLIMIT;
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {  // deep backtracking: the interpreter keeps its frames on the heap
      rc = pcre2_match(compiled_->code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT ||
        rc == PCRE2_ERROR_JIT_STACKLIMIT || rc == PCRE2_ERROR_NOMEMORY) {
      // Catastrophic backtracking: the text, not the library, is at fault.
      fail(
          ErrorCode::InvalidArgument,
          "{}: the text is too complex for the regex '{}' (at byte {}, PCRE2 gave up: {}); split it into shorter texts",
          compiled_->origin, compiled_->pattern, offset, pcre2_message(rc));
    }
    if (rc < 0) fail(ErrorCode::Internal, "{}: regex match failed: {}", compiled_->origin, pcre2_message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    const size_t start = ovector[0], end = ovector[1];
    on_match(start, end);
    if (end > start) {
      offset = end;
    } else {
      // Empty match: step over one whole code point so the next search starts on a boundary.
      offset = end + 1;
      while (offset < text.size() && (static_cast<uint8_t>(text[offset]) & 0xC0) == 0x80) ++offset;
    }
  }
}

void Regex::split_isolated(std::string_view text, std::vector<std::string_view>& pieces) const {
  size_t gap_start = 0;
  for_each_match(text, [&](size_t start, size_t end) {
    if (start > gap_start) pieces.push_back(text.substr(gap_start, start - gap_start));
    if (end > start) pieces.push_back(text.substr(start, end - start));
    gap_start = end;
  });
  if (gap_start < text.size()) pieces.push_back(text.substr(gap_start));
}

void Regex::find_matches(std::string_view text, std::vector<std::pair<size_t, size_t>>& matches) const {
  for_each_match(text, [&](size_t start, size_t end) { matches.emplace_back(start, end); });
}

std::shared_ptr<Regex> pattern_regex(const JsonFields& step) {
  const nlohmann::json pattern_json = step.get<nlohmann::json>("pattern");
  const JsonFields pattern(pattern_json, step.origin() + " pattern");
  const bool literal = !pattern.has("Regex");
  return std::make_shared<Regex>(literal ? pattern.get<std::string>("String") : pattern.get<std::string>("Regex"),
                                 literal, step.origin());
}

std::string replace_all(const Regex& regex, const std::string& text, const std::string& content) {
  std::vector<std::pair<size_t, size_t>> matches;
  regex.find_matches(text, matches);
  if (matches.empty()) return text;
  std::string out;
  out.reserve(text.size());
  size_t last = 0;
  for (const auto& [start, end] : matches) {
    out.append(text, last, start - last);
    out += content;
    last = end;
  }
  out.append(text, last, std::string::npos);
  return out;
}

}  // namespace izwi
