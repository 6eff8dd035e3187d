#include "structured/number_range.h"

#include <cmath>
#include <vector>

#include "common/check.h"
#include "structured/json_lexemes.h"

namespace izwi::structured {

namespace {

std::string join_alternatives(const std::vector<std::string>& parts) {
  if (parts.size() == 1) return parts[0];
  std::string out = "(?:";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "|" : "") + parts[i];
  return out + ")";
}

/// [a, b] for digit strings of equal length.
std::string fixed_length_range(const std::string& a, const std::string& b) {
  if (a.empty()) return "";
  if (a == b) return a;
  if (a.size() == 1) return std::string("[") + a[0] + "-" + b[0] + "]";
  if (a[0] == b[0]) return a[0] + fixed_length_range(a.substr(1), b.substr(1));
  const size_t rest = a.size() - 1;
  std::vector<std::string> parts;
  parts.push_back(a[0] + fixed_length_range(a.substr(1), std::string(rest, '9')));
  if (b[0] - a[0] > 1) {
    parts.push_back(std::string("[") + static_cast<char>(a[0] + 1) + "-" + static_cast<char>(b[0] - 1) + "][0-9]{" +
                    std::to_string(rest) + "}");
  }
  parts.push_back(b[0] + fixed_length_range(std::string(rest, '0'), b.substr(1)));
  return join_alternatives(parts);
}

int64_t power_of_ten(size_t digits) {
  int64_t p = 1;
  for (size_t i = 0; i < digits; ++i) p *= 10;
  return p;
}

/// The integers in [a, b] (b optional), a >= 0, without leading zeros.
std::string natural_range(int64_t a, std::optional<int64_t> b) {
  const size_t a_digits = std::to_string(a).size();
  const size_t b_digits = b ? std::to_string(*b).size() : a_digits;
  std::vector<std::string> parts;
  for (size_t length = a_digits; length <= b_digits; ++length) {
    const int64_t lo = std::max(a, length == 1 ? int64_t{0} : power_of_ten(length - 1));
    const int64_t hi = b ? std::min(*b, power_of_ten(length) - 1) : power_of_ten(length) - 1;
    if (lo <= hi) parts.push_back(fixed_length_range(std::to_string(lo), std::to_string(hi)));
  }
  if (!b && a_digits < kMaxIntegerDigits) {  // every longer number, up to the digits any number has
    parts.push_back("[1-9][0-9]{" + std::to_string(a_digits) + "," + std::to_string(kMaxIntegerDigits - 1) + "}");
  }
  return join_alternatives(parts);
}

void check_bound(std::optional<int64_t> bound, const std::string& field) {
  if (bound && (*bound > kMaxNumberBound || *bound < -kMaxNumberBound)) {
    fail(ErrorCode::Unsupported, "{}: bounds beyond +-1e15 are not supported", field);
  }
}

}  // namespace

std::string integer_range_regex(std::optional<int64_t> lo, std::optional<int64_t> hi, const std::string& field) {
  check_bound(lo, field);
  check_bound(hi, field);
  if (lo && hi && *lo > *hi) fail(ErrorCode::InvalidArgument, "{}: minimum {} above maximum {}", field, *lo, *hi);
  std::vector<std::string> parts;
  if (!hi || *hi >= 0) parts.push_back(natural_range(lo && *lo > 0 ? *lo : 0, hi));
  if (!lo || *lo < 0) {  // -|x| for |x| in [max(1, -hi), -lo]
    const int64_t smallest = hi && *hi < 0 ? -*hi : 1;
    parts.push_back("-" + natural_range(smallest, lo ? std::optional<int64_t>(-*lo) : std::nullopt));
  }
  return join_alternatives(parts);
}

std::string number_range_regex(std::optional<double> lo, std::optional<double> hi, const std::string& field) {
  std::optional<int64_t> int_lo;
  std::optional<int64_t> int_hi;
  if (lo) {
    if (std::fabs(*lo) > static_cast<double>(kMaxNumberBound)) check_bound(kMaxNumberBound + 1, field);
    int_lo = static_cast<int64_t>(std::ceil(*lo));
  }
  if (hi) {
    if (std::fabs(*hi) > static_cast<double>(kMaxNumberBound)) check_bound(kMaxNumberBound + 1, field);
    int_hi = static_cast<int64_t>(std::floor(*hi));
  }
  if (int_lo && int_hi && *int_lo > *int_hi) {
    fail(ErrorCode::Unsupported,
         "{}: no integer between minimum and maximum (number bounds are rounded inward to integers)", field);
  }
  const std::string fraction = "(?:\\.[0-9]+)?";
  const std::string zero_fraction = "(?:\\.0+)?";
  std::vector<std::string> parts;
  // x >= 0: floor(x) in [a, hi - 1] with any fraction, or x == hi exactly.
  if (!int_hi || *int_hi >= 0) {
    const int64_t a = int_lo && *int_lo > 0 ? *int_lo : 0;
    if (!int_hi) {
      parts.push_back(natural_range(a, std::nullopt) + fraction);
    } else {
      if (a <= *int_hi - 1) parts.push_back(natural_range(a, *int_hi - 1) + fraction);
      parts.push_back(std::to_string(*int_hi) + zero_fraction);
    }
  }
  // x = -y, y in [ymin, ymax]: floor(y) in [ymin, ymax - 1] with any fraction, or y == ymax exactly.
  if (!int_lo || *int_lo < 0) {
    const int64_t ymin = int_hi && *int_hi < 0 ? -*int_hi : 0;
    if (!int_lo) {
      parts.push_back("-" + natural_range(ymin, std::nullopt) + fraction);
    } else {
      const int64_t ymax = -*int_lo;
      if (ymin <= ymax - 1) parts.push_back("-" + natural_range(ymin, ymax - 1) + fraction);
      parts.push_back("-" + std::to_string(ymax) + zero_fraction);
    }
  }
  return join_alternatives(parts);
}

}  // namespace izwi::structured
