#include "common/float_wav.h"

namespace izwi::testing {

std::string mono_wav_bytes(uint16_t format, uint16_t bits, uint32_t rate, const std::string& data) {
  std::string b;
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&](uint16_t v) { b.append(reinterpret_cast<const char*>(&v), 2); };
  const uint16_t block = bits / 8;
  const auto size = static_cast<uint32_t>(data.size());
  b += "RIFF";
  u32(36 + size);
  b += "WAVEfmt ";
  u32(16);
  u16(format);
  u16(1);  // mono
  u32(rate);
  u32(rate * block);
  u16(block);
  u16(bits);
  b += "data";
  u32(size);
  return b + data;
}

std::string float_wav_bytes(const std::vector<float>& samples, uint32_t rate) {
  return mono_wav_bytes(3, 32, rate,
                        std::string(reinterpret_cast<const char*>(samples.data()), samples.size() * sizeof(float)));
}

}  // namespace izwi::testing
