#pragma once
// Where the CUDA kernels find a step's sequences and block tables: views into the one buffer a
// step's inputs are copied to the device in (make_forward_context). Built for the Cuda backend
// only; the CPU kernels read the host-side SeqSlice vector instead.

#include <ATen/ATen.h>

#include <cstdint>

#include "kernels/device_seq.h"

namespace izwi {

struct DeviceStepArrays {
  at::Tensor words;                       ///< int64, on the model's device: owns what the pointers see.
  const DeviceSeq* seqs = nullptr;        ///< [num_seqs]
  const int32_t* block_tables = nullptr;  ///< [num_seqs, table_stride], unused entries -1.
  int32_t num_seqs = 0;
  int64_t table_stride = 0;  ///< Blocks of the longest context in the step.
  int64_t max_length = 0;    ///< The most new positions of any sequence.

  bool staged() const { return seqs != nullptr; }
};

}  // namespace izwi
