#pragma once
// The paged-attention dispatch point: causal attention of a flattened batch against the paged
// K/V pools, read through each sequence's block table.

#include <ATen/ATen.h>

#include <vector>

#include "kernels/backend.h"
#include "kernels/device_step_arrays.h"
#include "kernels/seq_slice.h"

namespace izwi::ops {

/// q [T, heads, head_dim]; key_pool / value_pool [blocks, block_size, kv_heads, head_dim] already
/// holding this step's K/V; `seqs` say which rows of q belong to which sequence and its blocks.
/// sliding_window > 0: a query at p sees only keys in (p - window, p]. Cpu: the paged kernel for
/// float32 q and float32 or bf16 pools. Cuda: for float32, bf16 or f16 pools, chunks of at least
/// kPrefillAttentionMinRows rows through prefill_attention (prefill_attention_op.h); the other
/// sequences, read from `device_seqs` (staged on the device), through the split-K kernel when each
/// has one new row, the paged kernel otherwise (float32 arithmetic; float32 and bf16 q read and
/// written as they are, other dtypes through float32). Otherwise libtorch ops, a gather of each
/// sequence's blocks.
at::Tensor paged_attention(const Backend& backend, const at::Tensor& q, const at::Tensor& key_pool,
                           const at::Tensor& value_pool, const std::vector<SeqSlice>& seqs,
                           const DeviceStepArrays& device_seqs, int64_t block_size, double scale,
                           int64_t sliding_window);

}  // namespace izwi::ops
