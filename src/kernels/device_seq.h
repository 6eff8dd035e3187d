#pragma once
// One sequence of a step batch as the CUDA kernels read it from device memory (paged attention,
// the short convolution). Plain data without CUDA or libtorch headers: the step is packed on the
// host by the CPU build too (layers/step/forward_context.cpp), so the layout is tested there.

#include <cstdint>

namespace izwi {

struct DeviceSeq {
  int64_t offset;      ///< First row of the sequence in the flattened batch.
  int64_t length;      ///< New positions.
  int64_t start_pos;   ///< Positions already cached.
  int32_t state_slot;  ///< Its recurrent-state slot, or -1.
  int32_t padding;     ///< Keeps an array of these 8-byte aligned.
};

static_assert(sizeof(DeviceSeq) == 32, "DeviceSeq is packed into 64-bit words (4 per sequence)");

}  // namespace izwi
