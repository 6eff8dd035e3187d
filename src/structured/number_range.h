#pragma once
// Regular expressions (RegexTarget::RawBytes syntax) for JSON numbers within bounds.

#include <cstdint>
#include <optional>
#include <string>

namespace izwi::structured {

/// Bounds beyond this magnitude are refused (Unsupported): the digit-range expansion works on
/// int64 and real schemas' bounds are far smaller.
constexpr int64_t kMaxNumberBound = 1000000000000000;  // 1e15

/// The integers in [lo, hi] (either side optional) in JSON's form (no leading zeros, no "-0").
/// Throws InvalidArgument naming `field` when the range is empty.
std::string integer_range_regex(std::optional<int64_t> lo, std::optional<int64_t> hi, const std::string& field);

/// Numbers in [lo, hi] written without an exponent. Non-integer bounds are rounded inward to
/// integers (so a subset of the valid numbers is generated, never an invalid one); throws
/// Unsupported naming `field` when no integer lies within them.
std::string number_range_regex(std::optional<double> lo, std::optional<double> hi, const std::string& field);

}  // namespace izwi::structured
