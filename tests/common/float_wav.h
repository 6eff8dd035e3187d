#pragma once
// WAV bytes written by hand, for files izwi's own writer refuses to make (samples of 1e30 or NaN, a
// rate of 1 Hz): hostile inputs.

#include <cstdint>
#include <string>
#include <vector>

namespace izwi::testing {

/// Bytes of a mono WAV: a 16-byte fmt chunk of `format` (1 PCM, 3 IEEE float) with `bits` per
/// sample at `rate` Hz, then `data` as the data chunk.
std::string mono_wav_bytes(uint16_t format, uint16_t bits, uint32_t rate, const std::string& data);

/// Bytes of a mono 32-bit IEEE float WAV holding `samples` at `rate` Hz.
std::string float_wav_bytes(const std::vector<float>& samples, uint32_t rate);

}  // namespace izwi::testing
