#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/element_dtype.h"
#include "kernels/device_seq.h"

namespace izwi {

struct ShortConvCudaArgs {
  const void* bx;         ///< [tokens, channels] in `activations`: the gated inputs of the whole batch.
  void* out;              ///< [tokens, channels] in `activations`
  const void* weight_t;   ///< [kernel, channels] in `weights`
  const void* bias;       ///< [channels] in `weights`, or null.
  void* state;            ///< [slots, kernel - 1, channels] in `activations`: each slot's last inputs, oldest first.
  const DeviceSeq* seqs;  ///< Each sequence's rows, positions already seen and state slot.
  int32_t num_seqs;
  int64_t channels;
  int64_t kernel;  ///< At most kShortConvMaxKernel.
  /// Optional (null: none): the state after each block's last position, as ShortConv keeps it for
  /// prefix-cache hits: snapshots [blocks, kernel - 1, channels] in `activations`, written for every
  /// block boundary inside the new positions, the block found through block_tables [num_seqs, table_stride].
  void* snapshots;
  const int32_t* block_tables;
  int64_t table_stride;
  int64_t block_size;
  ElementDtype activations = ElementDtype::Float32;  ///< Float32, BFloat16 or Float16.
  ElementDtype weights = ElementDtype::Float32;      ///< Float32 or the activations' dtype.
};

constexpr int64_t kShortConvMaxKernel = 8;

/// short_conv_cpu for every sequence of a batch at once, on device pointers: out[t][c] = bias[c] +
/// sum_k weight_t[k][c] * x[t + k - width][c], with the inputs before the new rows taken from the
/// sequence's state slot, which holds its last kernel - 1 inputs on return. Preparing the state
/// (zeroing a fresh one, restoring a snapshot) is the caller's, as on the CPU. Sums in float32,
/// each output rounded once to the activations' dtype; states and snapshots hold inputs as given.
/// Every sequence is read from `seqs` on the device, so a CUDA graph can capture the call.
void short_conv_cuda(const ShortConvCudaArgs& args, cudaStream_t stream);

}  // namespace izwi
