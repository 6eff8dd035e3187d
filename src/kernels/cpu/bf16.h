#pragma once
// bfloat16 as the CPU kernels store it: the top 16 bits of a float32.

#include <cmath>
#include <cstdint>
#include <cstring>

namespace izwi {

inline float bf16_to_float(uint16_t bits) {
  const uint32_t widened = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &widened, sizeof(f));
  return f;
}

/// float32 -> bf16 bits, rounded to nearest even; NaN -> 0x7FC0. The same bits as libtorch's
/// conversion (c10::BFloat16), so a kernel that rounds as it stores writes what .to(kBFloat16)
/// would.
inline uint16_t float_to_bf16(float value) {
  if (std::isnan(value)) return 0x7FC0;
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace izwi
