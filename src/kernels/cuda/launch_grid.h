#pragma once
// The grid of a grid-stride kernel: a block per `threads` units, at least one, at most `max_blocks`
// (each thread then takes every (blocks * threads)-th unit).

#include <algorithm>
#include <cstdint>

namespace izwi {

inline unsigned grid_stride_blocks(int64_t units, int threads, int64_t max_blocks = 4096) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((units + threads - 1) / threads, max_blocks)));
}

}  // namespace izwi
