#include "common/float_wav.h"

namespace izwi::testing {

std::string float_wav_bytes(const std::vector<float>& samples, uint32_t rate) {
  std::string b;
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&](uint16_t v) { b.append(reinterpret_cast<const char*>(&v), 2); };
  const auto data = static_cast<uint32_t>(samples.size() * sizeof(float));
  b += "RIFF";
  u32(36 + data);
  b += "WAVEfmt ";
  u32(16);
  u16(3);  // WAVE_FORMAT_IEEE_FLOAT
  u16(1);  // mono
  u32(rate);
  u32(rate * 4);
  u16(4);
  u16(32);
  b += "data";
  u32(data);
  b.append(reinterpret_cast<const char*>(samples.data()), data);
  return b;
}

}  // namespace izwi::testing
