#pragma once
// Split-K (FlashDecoding) attention for decode-only steps: each (sequence, KV head) context is cut
// into partitions of keys, one thread block each, so a batch of one sequence still fills the GPU;
// a second kernel combines the partitions. The same arguments and results as paged_attention_cuda
// (paged_attention_cpu on device pointers) where every sequence has at most one new row.

#include <cuda_runtime_api.h>

#include "kernels/cuda/paged_attention_cuda.h"
#include "kernels/paged_decode_plan.h"

namespace izwi {

/// Whether the split-K kernel takes these arguments: a decode-only step (max_length == 1),
/// head_dim <= kPagedDecodeMaxHeadDim, a grid that holds the batch. Otherwise paged_attention_cuda.
bool paged_decode_attention_applies(const PagedAttentionCudaArgs& args);

/// The current device's multiprocessor count (what plan_paged_decode fills).
int cuda_multiprocessor_count();

/// plan_paged_decode for these arguments, max_context = table_stride * block_size.
PagedDecodePlan plan_paged_decode_attention(const PagedAttentionCudaArgs& args, int multiprocessors);

/// Attention of every sequence's one new row (a sequence of length 0 leaves its rows untouched).
/// workspace: plan.workspace_floats floats of device memory, overwritten (no initial values needed;
/// unused when the plan has one partition). Two launches on `stream` (one with a single partition,
/// which writes the output itself), no host synchronisation: a CUDA graph may capture it.
void paged_decode_attention_cuda(const PagedAttentionCudaArgs& args, const PagedDecodePlan& plan, float* workspace,
                                 cudaStream_t stream);

}  // namespace izwi
