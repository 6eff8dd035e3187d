#pragma once
// Causal attention of a flattened batch against the paged K/V pools on the GPU, reading each
// sequence's keys through its block table (no gathered copies): paged_attention_cpu on device
// pointers, for decode steps and chunked prefill alike (decode-only steps fill the GPU better
// through the split-K kernel, paged_decode_attention_cuda.h, which takes the same arguments).

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/element_dtype.h"
#include "kernels/device_seq.h"

namespace izwi {

using KvDtype = ElementDtype;

struct PagedAttentionCudaArgs {
  const void* q;           ///< [tokens, num_heads, head_dim] of activation_dtype
  const void* key_pool;    ///< [blocks, block_size, num_kv_heads, head_dim] of kv_dtype
  const void* value_pool;  ///< as key_pool
  void* out;               ///< [tokens, num_heads, head_dim] of activation_dtype
  KvDtype kv_dtype;
  /// q and out: Float32 or BFloat16 (read widened, written rounded once to nearest even).
  ElementDtype activation_dtype = ElementDtype::Float32;
  /// num_seqs entries: rows offset .. offset + length of q / out are sequence s's new positions
  /// start_pos .. start_pos + length. Rows no sequence covers are left untouched.
  const DeviceSeq* seqs;
  const int32_t* block_tables;  ///< [num_seqs, table_stride]: sequence s's blocks.
  int32_t num_seqs;
  int64_t table_stride;
  int64_t max_length;  ///< The most new rows of any sequence (sizes the grid).
  int64_t num_heads;
  int64_t num_kv_heads;
  int64_t head_dim;
  int64_t block_size;
  int64_t sliding_window = 0;  ///< > 0: a query at p sees only keys in (p - window, p].
  float scale;
};

/// Query row i of a sequence sits at start_pos + i and attends to keys 0 ..= start_pos + i (the
/// last `sliding_window` of them when a window is set), with float32 scores, softmax and sums.
void paged_attention_cuda(const PagedAttentionCudaArgs& args, cudaStream_t stream);

}  // namespace izwi
