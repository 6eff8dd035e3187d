#include "cache/block_hash.h"

namespace izwi {

namespace {

constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;

// Byte by byte in little-endian order, so the value does not depend on the host's byte order.
uint64_t fnv1a(uint64_t h, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    h ^= (value >> (8 * i)) & 0xffu;
    h *= kFnvPrime;
  }
  return h;
}

}  // namespace

uint64_t block_hash(uint64_t parent, const int32_t* tokens, int32_t n) {
  uint64_t h = fnv1a(kFnvOffsetBasis, parent, 8);
  for (int32_t i = 0; i < n; ++i) h = fnv1a(h, static_cast<uint32_t>(tokens[i]), 4);
  return h;
}

}  // namespace izwi
