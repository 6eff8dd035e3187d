#pragma once
// Python's str semantics on UTF-8 text: lengths, indices and slices count code points, and
// "whitespace" is str.isspace()'s set.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace izwi::jinja::py {

std::u32string decode(std::string_view utf8);
std::string encode(const std::u32string& text);
size_t length(std::string_view utf8);  ///< code points
/// decode(utf8).size() and decode(utf8)[at] (at < that size), without decoding all of it.
size_t code_points(std::string_view utf8);
char32_t code_point_at(std::string_view utf8, size_t at);
bool is_space(char32_t c);

/// s.find(sub, from) in linear time (glibc's memmem is Two-Way): std::string::find compares sub at
/// every position, hours for 'a' * 30M searched for 'a' * 1M ~ 'b'.
size_t find(std::string_view s, std::string_view sub, size_t from = 0);
/// s.rfind(sub) in linear time.
size_t rfind(std::string_view s, std::string_view sub);
/// str.strip/lstrip/rstrip: `chars` absent = whitespace.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);
/// str.split(sep, maxsplit); `sep` absent = runs of whitespace.
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
/// str.rsplit(sep, maxsplit).
std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
std::string replace(std::string_view s, std::string_view old, std::string_view replacement, int64_t count);
std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);
std::string capitalize(std::string_view s);
std::vector<std::string> splitlines(std::string_view s);

/// The positions s[start:stop:step] selects in a sequence of `size`: first, first + step, ... (count
/// of them).
struct SliceRange {
  int64_t first = 0;
  int64_t step = 1;
  int64_t count = 0;
  int64_t operator[](int64_t k) const { return first + k * step; }
};
SliceRange slice_indices(int64_t size, std::optional<int64_t> start, std::optional<int64_t> stop,
                         std::optional<int64_t> step);

}  // namespace izwi::jinja::py
