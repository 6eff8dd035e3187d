#pragma once
// One way to name an enum's values: a constexpr table of {value, name} rows per enum, in the
// order of the enumerators, read both ways by enum_name() and enum_from_name(). A table replaces
// a to_string switch and, where a name is also parsed, the if-chain that parses it.
//
//   constexpr EnumName<Color> kColorNames[] = {{Color::Red, "red"}, {Color::Green, "green"}};
//   static_assert(enum_names_in_order(kColorNames));  // no gap, no duplicate, no reordering
//   const char* to_string(Color c) { return enum_name(kColorNames, c, "unknown"); }

#include <cstddef>
#include <optional>
#include <string_view>

namespace izwi {

template <typename Enum>
struct EnumName {
  Enum value;
  const char* name;
};

/// Whether row i of `names` holds the enumerator whose value is i: lookups by value are then an
/// index, and a table that skips or repeats an enumerator fails its static_assert.
template <typename Enum, size_t N>
constexpr bool enum_names_in_order(const EnumName<Enum> (&names)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (static_cast<size_t>(names[i].value) != i) return false;
  }
  return true;
}

/// The name of `value`, or `unknown` for a value outside the table (a cast integer).
template <typename Enum, size_t N>
constexpr const char* enum_name(const EnumName<Enum> (&names)[N], Enum value, const char* unknown) noexcept {
  const auto index = static_cast<size_t>(value);
  return index < N && names[index].value == value ? names[index].name : unknown;
}

/// The value named `name` (exact, case-sensitive match), or nullopt.
template <typename Enum, size_t N>
constexpr std::optional<Enum> enum_from_name(const EnumName<Enum> (&names)[N], std::string_view name) noexcept {
  for (const EnumName<Enum>& row : names) {
    if (name == row.name) return row.value;
  }
  return std::nullopt;
}

}  // namespace izwi
