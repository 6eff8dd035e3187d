#pragma once
// The short-convolution dispatch point (LFM2): the causal depthwise convolution of a whole step
// batch, each sequence continuing from its state.

#include <ATen/ATen.h>

#include <vector>

#include "kernels/backend.h"
#include "kernels/device_step_arrays.h"
#include "kernels/seq_slice.h"

namespace izwi::ops {

/// The tensors of one short-convolution layer that a step reads and updates.
struct ShortConvTensors {
  at::Tensor weight_t;   ///< [kernel, channels]
  at::Tensor bias;       ///< [channels] or undefined
  at::Tensor states;     ///< [slots, kernel - 1, channels]: a sequence's last inputs, oldest first
  at::Tensor snapshots;  ///< [blocks, kernel - 1, channels]: the state after a block's last position
};

/// bx [T, channels]: the new inputs of every sequence in `seqs` (its rows offset .. offset +
/// length). Writes out [T, channels], leaves each sequence's state slot holding its last kernel - 1
/// inputs, and copies the state at every block boundary inside the new positions to that block's
/// snapshot (prefix-cache hits restore it). Preparing a fresh state (zeroing, restoring a snapshot)
/// is the caller's. Cpu: one fused pass per sequence for float32. Cuda: one kernel for the batch
/// (float32, reading `device_seqs`). Otherwise libtorch ops.
void short_conv(const Backend& backend, const at::Tensor& bx, const ShortConvTensors& layer,
                const std::vector<SeqSlice>& seqs, const DeviceStepArrays& device_seqs, int64_t block_size,
                at::Tensor& out);

}  // namespace izwi::ops
