#pragma once

#include <cstdint>

namespace izwi {

/// Copy one KV block's contents to another (copy-on-write of a shared block).
struct BlockCopy {
  int32_t src = 0;
  int32_t dst = 0;
};

}  // namespace izwi
