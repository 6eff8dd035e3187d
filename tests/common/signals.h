#pragma once
// Synthetic audio for tests.

#include <cmath>
#include <cstddef>
#include <vector>

namespace izwi::testing {

/// `count` samples of a sine of `hz` at `rate`, peak `amplitude`.
inline std::vector<float> sine(double hz, int rate, size_t count, float amplitude = 0.5f) {
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = amplitude * static_cast<float>(std::sin(2 * M_PI * hz * i / rate));
  return out;
}

}  // namespace izwi::testing
