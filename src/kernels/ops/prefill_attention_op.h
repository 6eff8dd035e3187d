#pragma once
// Attention of a step's long prefill chunks through libtorch's scaled_dot_product_attention
// (FlashAttention / memory-efficient kernels on tensor cores on CUDA) over each sequence's K/V
// gathered from the paged pools. The paged kernel (paged_attention_op.h) reads the pools in place
// but computes in float32 on CUDA cores, which a long chunk's rows x context scores make slow.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "kernels/device_step_arrays.h"
#include "kernels/seq_slice.h"

namespace izwi::ops {

/// Chunks of at least this many new rows go through prefill_attention on the Cuda backend. Below
/// it the tensor-core kernels' tiles (64-128 query rows) run mostly empty, while the gather copies
/// the sequence's whole context per layer; the paged kernel reads that context in place. Decode
/// rows (1 each) never qualify. Not tuned on a GPU yet.
constexpr int64_t kPrefillAttentionMinRows = 64;

/// Whether `s` goes through prefill_attention (its chunk is long).
inline bool takes_prefill_attention(const SeqSlice& s) { return s.length >= kPrefillAttentionMinRows; }

/// Causal attention of `seqs` (any subset of a step's sequences) as paged_attention computes it,
/// written into their rows of `out` [T, heads, head_dim] (any float dtype; other rows untouched).
/// q [T, heads, head_dim]; pools [blocks, block_size, kv_heads, head_dim], K/V taken in q's dtype.
/// Per sequence: its blocks gathered (one index_select per pool), each KV head repeated for its
/// query heads, then scaled_dot_product_attention on [1, heads, rows, context] views: causal
/// (FlashAttention on bf16 / f16 CUDA tensors) for a chunk from position 0 without a window;
/// after a cached prefix FlashAttention's own bottom-right causal kernel where libtorch 2.x has it
/// and the device runs it (`cuda_sm_version` >= 80, Backend::cuda_sm_version; 0 off CUDA), else a
/// boolean mask, as under a sliding window. Device-agnostic: the same code runs on CPU tensors.
void prefill_attention(const at::Tensor& q, const at::Tensor& key_pool, const at::Tensor& value_pool,
                       const std::vector<SeqSlice>& seqs, int64_t block_size, double scale, int64_t sliding_window,
                       int32_t cuda_sm_version, at::Tensor& out);

/// A step's sequences split between prefill_attention and the paged kernel.
struct PrefillSplit {
  std::vector<SeqSlice> prefill;  ///< The long chunks (takes_prefill_attention).
  std::vector<SeqSlice> paged;    ///< The others.
  DeviceStepArrays paged_device;  ///< `paged` staged as the paged kernel reads them.
};

/// `device_seqs` holds `seqs` staged in the same order. Without long chunks `paged_device` is
/// `device_seqs` itself; otherwise a compacted copy (one small host-to-device index copy and
/// gathers on the device, no host sync) without them, its max_length theirs alone.
PrefillSplit split_prefill(const std::vector<SeqSlice>& seqs, const DeviceStepArrays& device_seqs);

}  // namespace izwi::ops
