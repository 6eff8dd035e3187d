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
bool is_space(char32_t c);

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

/// Python's slice indices for a sequence of `size`: the positions s[start:stop:step] selects.
std::vector<int64_t> slice_indices(int64_t size, std::optional<int64_t> start, std::optional<int64_t> stop,
                                   std::optional<int64_t> step);

}  // namespace izwi::jinja::py
