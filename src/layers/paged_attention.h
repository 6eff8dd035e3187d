#pragma once
// Attention over the paged KV cache: stores the batch's new K/V at their slots, then attends
// each query to its sequence's cached keys. CPU float32 uses the kernel in kernels/cpu; every
// other device/dtype (CUDA, MPS, bf16) uses libtorch ops, which also serve as the reference.

#include <ATen/ATen.h>

#include "layers/step/cache_buffers.h"
#include "layers/step/forward_context.h"

namespace izwi {

/// q: [T, H, D]; k, v: [T, KVH, D] for the new positions. Returns [T, H, D]. A positive
/// `sliding_window` limits each query to the keys of its last `sliding_window` positions.
at::Tensor paged_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, LayerCache& cache,
                           const ForwardContext& ctx, double scale, int64_t sliding_window = 0);

}  // namespace izwi
