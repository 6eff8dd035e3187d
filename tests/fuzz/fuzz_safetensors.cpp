// Fuzz target: any byte string handed to the safetensors parser either parses into tensors
// that tile the data section exactly, or raises izwi::Error. Nothing else may happen.

#include <cstdint>
#include <cstdlib>

#include "io/safetensors.h"
#include "izwi/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t offset = 0;
  try {
    const auto tensors = izwi::parse_safetensors(data, size, "fuzz-input", &offset);
    uint64_t covered = 0;
    for (const auto& t : tensors) covered += t.end - t.begin;
    if (offset > size || covered != size - offset) std::abort();  // accepted an inconsistent file
  } catch (const izwi::Error&) {
  }
  return 0;
}
