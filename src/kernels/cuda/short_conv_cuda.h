#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/device_seq.h"

namespace izwi {

struct ShortConvCudaArgs {
  const float* bx;        ///< [tokens, channels]: the gated inputs of the whole batch.
  float* out;             ///< [tokens, channels]
  const float* weight_t;  ///< [kernel, channels]
  const float* bias;      ///< [channels] or null.
  float* state;           ///< [slots, kernel - 1, channels]: each slot's last inputs, oldest first.
  const DeviceSeq* seqs;  ///< Each sequence's rows, positions already seen and state slot.
  int32_t num_seqs;
  int64_t channels;
  int64_t kernel;  ///< At most kShortConvMaxKernel.
  /// Optional (null: none): the state after each block's last position, as ShortConv keeps it for
  /// prefix-cache hits: snapshots [blocks, kernel - 1, channels], written for every block boundary
  /// inside the new positions, the block found through block_tables [num_seqs, table_stride].
  float* snapshots;
  const int32_t* block_tables;
  int64_t table_stride;
  int64_t block_size;
};

constexpr int64_t kShortConvMaxKernel = 8;

/// short_conv_cpu for every sequence of a batch at once, on device pointers: out[t][c] = bias[c] +
/// sum_k weight_t[k][c] * x[t + k - width][c], with the inputs before the new rows taken from the
/// sequence's state slot, which holds its last kernel - 1 inputs on return. Preparing the state
/// (zeroing a fresh one, restoring a snapshot) is the caller's, as on the CPU.
void short_conv_cuda(const ShortConvCudaArgs& args, cudaStream_t stream);

}  // namespace izwi
