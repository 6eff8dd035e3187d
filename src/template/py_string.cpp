#include "template/py_string.h"

#include <utf8proc.h>

#include <string.h>  // memmem

#include <algorithm>

#include "template/limits.h"
#include "template/value.h"

namespace izwi::jinja::py {

namespace {

// Calls visit(code point) for each code point, until it returns false.
template <typename Visit>
void each_code_point(std::string_view utf8, Visit&& visit) {
  size_t i = 0;
  while (i < utf8.size()) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data() + i),
                                                static_cast<utf8proc_ssize_t>(utf8.size() - i), &cp);
    // not UTF-8: keep the byte (U+FFFD as its stand-in would be lossy)
    const size_t used = n <= 0 ? 1 : static_cast<size_t>(n);
    if (!visit(n <= 0 ? static_cast<char32_t>(static_cast<unsigned char>(utf8[i])) : static_cast<char32_t>(cp))) return;
    i += used;
  }
}

}  // namespace

std::u32string decode(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  each_code_point(utf8, [&](char32_t c) {
    out.push_back(c);
    return true;
  });
  return out;
}

size_t code_points(std::string_view utf8) {
  size_t count = 0;
  each_code_point(utf8, [&](char32_t) {
    ++count;
    return true;
  });
  return count;
}

char32_t code_point_at(std::string_view utf8, size_t at) {
  char32_t found = 0;
  size_t k = 0;
  each_code_point(utf8, [&](char32_t c) {
    if (k++ < at) return true;
    found = c;
    return false;
  });
  return found;
}

std::string encode(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char32_t c : text) {
    utf8proc_uint8_t buf[4];
    const utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
  }
  return out;
}

size_t length(std::string_view utf8) {
  size_t n = 0;
  for (const char c : utf8) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool is_space(char32_t c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case 0x1c:
    case 0x1d:
    case 0x1e:
    case 0x1f:
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200a;
  }
}

size_t find(std::string_view s, std::string_view sub, size_t from) {
  if (from > s.size()) return std::string_view::npos;
  if (sub.empty()) return from;
  const void* hit = memmem(s.data() + from, s.size() - from, sub.data(), sub.size());
  return hit ? static_cast<size_t>(static_cast<const char*>(hit) - s.data()) : std::string_view::npos;
}

size_t rfind(std::string_view s, std::string_view sub) {
  // The first hit in the reversed text is the last one here.
  const std::string rs(s.rbegin(), s.rend()), rsub(sub.rbegin(), sub.rend());
  const size_t hit = py::find(rs, rsub, 0);
  return hit == std::string_view::npos ? hit : s.size() - hit - sub.size();
}

std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
  const std::u32string text = decode(s);
  std::u32string set = chars ? decode(*chars) : std::u32string();
  std::sort(set.begin(), set.end());  // a lookup per character: a long `chars` must not make it quadratic
  const auto stripped = [&](char32_t c) { return chars ? std::binary_search(set.begin(), set.end(), c) : is_space(c); };
  size_t begin = 0, end = text.size();
  if (left) {
    while (begin < end && stripped(text[begin])) ++begin;
  }
  if (right) {
    while (end > begin && stripped(text[end - 1])) --end;
  }
  return encode(text.substr(begin, end - begin));
}

namespace {

std::vector<std::string> split_whitespace(std::string_view s, int64_t maxsplit, bool from_right) {
  std::u32string text = decode(s);
  if (from_right) std::reverse(text.begin(), text.end());
  std::vector<std::u32string> parts;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      size_t end = text.size();
      while (end > i && is_space(text[end - 1])) --end;
      parts.push_back(text.substr(i, end - i));
      break;
    }
    size_t j = i;
    while (j < text.size() && !is_space(text[j])) ++j;
    check_items(parts.size() + 1);
    parts.push_back(text.substr(i, j - i));
    i = j;
  }
  std::vector<std::string> out;
  for (auto& p : parts) {
    if (from_right) std::reverse(p.begin(), p.end());
    out.push_back(encode(p));
  }
  if (from_right) std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
  if (!sep) return split_whitespace(s, maxsplit, false);
  if (sep->empty()) throw EvalError("split(): empty separator");
  std::vector<std::string> out;
  size_t pos = 0;
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    const size_t hit = py::find(s, *sep, pos);
    if (hit == std::string_view::npos) break;
    check_items(out.size() + 2);  // and the rest
    out.emplace_back(s.substr(pos, hit - pos));
    pos = hit + sep->size();
  }
  out.emplace_back(s.substr(pos));
  return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
  if (!sep) return split_whitespace(s, maxsplit, true);
  if (sep->empty()) throw EvalError("rsplit(): empty separator");
  // rsplit is split from the right: split the reversed text by the reversed separator.
  const std::string rs(s.rbegin(), s.rend()), rsep(sep->rbegin(), sep->rend());
  std::vector<std::string> out = split(rs, rsep, maxsplit);
  for (std::string& part : out) std::reverse(part.begin(), part.end());
  std::reverse(out.begin(), out.end());
  return out;
}

std::string replace(std::string_view s, std::string_view old, std::string_view replacement, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts the replacement between code points
    const std::u32string text = decode(s);
    int64_t done = 0;
    for (size_t i = 0; i <= text.size(); ++i) {
      if (count < 0 || done < count) {
        out += replacement;
        ++done;
      }
      if (i < text.size()) out += encode(std::u32string(1, text[i]));
      check_string_size(out.size());
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t hit = py::find(s, old, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(replacement);
    check_string_size(out.size());
    pos = hit + old.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

std::string upper(std::string_view s) {
  std::u32string text = decode(s);
  for (char32_t& c : text) c = static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c)));
  return encode(text);
}

std::string lower(std::string_view s) {
  std::u32string text = decode(s);
  for (char32_t& c : text) c = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
  return encode(text);
}

namespace {
bool is_cased_letter(char32_t c) {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
}
}  // namespace

std::string title(std::string_view s) {
  std::u32string text = decode(s);
  bool previous_cased = false;
  for (char32_t& c : text) {
    const bool cased = is_cased_letter(c);
    if (cased) {
      c = static_cast<char32_t>(previous_cased ? utf8proc_tolower(static_cast<utf8proc_int32_t>(c))
                                               : utf8proc_totitle(static_cast<utf8proc_int32_t>(c)));
    }
    previous_cased = cased;
  }
  return encode(text);
}

std::string capitalize(std::string_view s) {
  std::u32string text = decode(s);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<utf8proc_int32_t>(text[i]);
    text[i] = static_cast<char32_t>(i == 0 ? utf8proc_totitle(c) : utf8proc_tolower(c));
  }
  return encode(text);
}

std::vector<std::string> splitlines(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0, i = 0;
  while (i < s.size()) {
    if (s[i] == '\n' || s[i] == '\r') {
      check_items(out.size() + 1);
      out.emplace_back(s.substr(start, i - start));
      if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      start = ++i;
    } else {
      ++i;
    }
  }
  if (start < s.size()) out.emplace_back(s.substr(start));
  return out;
}

SliceRange slice_indices(int64_t size, std::optional<int64_t> start, std::optional<int64_t> stop,
                         std::optional<int64_t> step) {
  const int64_t st = step.value_or(1);
  if (st == 0) throw EvalError("slice step cannot be zero");
  const auto clamp = [&](std::optional<int64_t> v, int64_t dflt, int64_t lo, int64_t hi) {
    if (!v) return dflt;
    // -INT64_MIN would overflow; any index that negative is clamped to lo anyway
    const int64_t x = *v < 0 ? (*v < -size ? lo : *v + size) : *v;
    return std::clamp(x, lo, hi);
  };
  SliceRange r;
  r.step = st;
  // The step may be anything in int64: count in 128 bits (it is at most size).
  if (st > 0) {
    r.first = clamp(start, 0, 0, size);
    const int64_t e = clamp(stop, size, 0, size);
    if (e > r.first) r.count = static_cast<int64_t>((__int128{e} - r.first + st - 1) / st);
  } else {
    r.first = clamp(start, size - 1, -1, size - 1);
    const int64_t e = clamp(stop, -1, -1, size - 1);
    if (r.first > e) r.count = static_cast<int64_t>((__int128{r.first} - e - st - 1) / -__int128{st});
  }
  return r;
}

}  // namespace izwi::jinja::py
