#include "tokenizer/utf8.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "common/check.h"

namespace izwi::utf8 {
namespace {

// Length of the valid (possibly incomplete) UTF-8 sequence at bytes[pos], following the
// Unicode "maximal subpart" rules; `complete` tells whether all of it is present.
size_t valid_run(std::string_view s, size_t pos, bool* complete) {
  const auto b = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t lead = b(pos);
  *complete = true;
  if (lead < 0x80) return 1;
  size_t need = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    *complete = false;
    return 0;
  }
  size_t n = 1;
  for (; n < need && pos + n < s.size(); ++n) {
    const uint8_t c = b(pos + n);
    const bool ok = n == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    if (!ok) break;
  }
  *complete = n == need;
  return n;
}

}  // namespace

std::optional<size_t> first_invalid(std::string_view bytes) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (static_cast<uint8_t>(bytes[pos]) < 0x80) {
      ++pos;
      continue;
    }
    bool complete = false;
    const size_t n = valid_run(bytes, pos, &complete);
    if (!complete) return pos;
    pos += n;
  }
  return std::nullopt;
}

void require_valid(std::string_view bytes, std::string_view what) {
  if (const auto bad = first_invalid(bytes)) {
    fail(ErrorCode::InvalidArgument,
         "{} is not valid UTF-8: byte 0x{:02X} at byte offset {} does not start a complete sequence", what,
         static_cast<uint8_t>(bytes[*bad]), *bad);
  }
}

std::string lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    bool complete = false;
    const size_t n = valid_run(bytes, pos, &complete);
    if (complete) {
      out.append(bytes.substr(pos, n));
      pos += n;
    } else {
      out.append("\xEF\xBF\xBD");
      pos += n == 0 ? 1 : n;
    }
  }
  return out;
}

size_t complete_prefix(std::string_view bytes) {
  // A held-back tail starts at a lead byte at most 3 bytes from the end.
  const size_t end = bytes.size();
  for (size_t back = 1; back <= 3 && back <= end; ++back) {
    const size_t pos = end - back;
    const uint8_t c = static_cast<uint8_t>(bytes[pos]);
    if (c >= 0x80 && c <= 0xBF) continue;  // continuation byte: look further back
    if (c < 0xC0) return end;
    bool complete = false;
    const size_t n = valid_run(bytes, pos, &complete);
    return (!complete && pos + n == end && n > 0) ? pos : end;
  }
  return end;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string nfc(std::string_view text) {
  // ASCII characters are NFC-stable and never compose with a neighbour, except that a
  // combining mark may attach to an ASCII letter before it. So only runs of non-ASCII text,
  // each with the ASCII character before it, go through utf8proc; the rest is copied.
  std::string out;
  out.reserve(text.size());
  size_t copied = 0;
  while (copied < text.size()) {
    size_t run = copied;
    while (run < text.size() && static_cast<uint8_t>(text[run]) < 0x80) ++run;
    if (run == text.size()) break;
    if (run > copied) --run;  // the possible base character of a leading combining mark
    out.append(text.substr(copied, run - copied));
    size_t end = run + 1;
    while (end < text.size() && static_cast<uint8_t>(text[end]) >= 0x80) ++end;
    utf8proc_uint8_t* result = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + run),
                                            static_cast<utf8proc_ssize_t>(end - run), &result,
                                            static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
    if (n < 0) fail(ErrorCode::InvalidArgument, "NFC normalisation failed: {}", utf8proc_errmsg(n));
    std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(result, &std::free);
    out.append(reinterpret_cast<const char*>(result), static_cast<size_t>(n));
    copied = end;
  }
  out.append(text.substr(copied));
  return out;
}

std::string normalize(std::string_view text, Form form) {
  if (form == Form::NFC) return nfc(text);
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<uint8_t>(c) < 0x80;
  if (ascii) return std::string(text);  // every form leaves ASCII as it is
  int options = UTF8PROC_STABLE;
  if (form == Form::NFD) options |= UTF8PROC_DECOMPOSE;
  if (form == Form::NFKC) options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
  if (form == Form::NFKD) options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
  utf8proc_uint8_t* result = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                   &result, static_cast<utf8proc_option_t>(options));
  if (n < 0) fail(ErrorCode::InvalidArgument, "Unicode normalisation failed: {}", utf8proc_errmsg(n));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(result, &std::free);
  return std::string(reinterpret_cast<const char*>(result), static_cast<size_t>(n));
}

char32_t decode_at(std::string_view text, size_t pos, size_t* length) {
  const auto b = [&](size_t i) { return static_cast<char32_t>(static_cast<uint8_t>(text[pos + i])); };
  const uint8_t lead = static_cast<uint8_t>(text[pos]);
  const size_t n = std::min(sequence_length(lead), text.size() - pos);
  *length = n;
  switch (n) {
    case 1:
      return lead;
    case 2:
      return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
      return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

std::string lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const uint8_t lead = static_cast<uint8_t>(text[pos]);
    if (lead < 0x80) {
      out += static_cast<char>(lead >= 'A' && lead <= 'Z' ? lead + 32 : lead);
      ++pos;
      continue;
    }
    size_t n = 0;
    const char32_t cp = decode_at(text, pos, &n);
    pos += n;
    if (cp == 0x130) {  // the one unconditional multi-character lower case mapping
      out += "i\xCC\x87";
      continue;
    }
    append(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
  }
  return out;
}

bool is_whitespace(char32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  switch (cp) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool is_numeric(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  const utf8proc_category_t c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

bool is_punctuation(char32_t cp) {
  if (cp < 0x80)
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
           (cp >= 0x7B && cp <= 0x7E);
  const utf8proc_category_t c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

}  // namespace izwi::utf8
