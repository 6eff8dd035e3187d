#include "structured/grammar.h"

namespace izwi::structured {

ByteSet ByteSet::of(uint8_t byte) {
  ByteSet set;
  set.add(byte);
  return set;
}

ByteSet ByteSet::range(uint8_t lo, uint8_t hi) {
  ByteSet set;
  set.add_range(lo, hi);
  return set;
}

void ByteSet::add_range(uint8_t lo, uint8_t hi) {
  for (int b = lo; b <= hi; ++b) add(static_cast<uint8_t>(b));
}

ByteSet& ByteSet::operator|=(const ByteSet& other) {
  for (size_t i = 0; i < bits.size(); ++i) bits[i] |= other.bits[i];
  return *this;
}

}  // namespace izwi::structured
