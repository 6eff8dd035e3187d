#pragma once
// bfloat16 as the CPU kernels store it: the top 16 bits of a float32.

#include <cstdint>
#include <cstring>

namespace izwi {

inline float bf16_to_float(uint16_t bits) {
  const uint32_t widened = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &widened, sizeof(f));
  return f;
}

}  // namespace izwi
