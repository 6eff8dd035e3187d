#pragma once
// WAV bytes written by hand, for samples izwi's own writer refuses (1e30, NaN): hostile inputs.

#include <cstdint>
#include <string>
#include <vector>

namespace izwi::testing {

/// Bytes of a mono 32-bit IEEE float WAV holding `samples` at `rate` Hz.
std::string float_wav_bytes(const std::vector<float>& samples, uint32_t rate);

}  // namespace izwi::testing
