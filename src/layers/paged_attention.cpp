#include "layers/paged_attention.h"

#include "kernels/ops/paged_attention_op.h"

namespace izwi {

at::Tensor paged_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, LayerCache& cache,
                           const ForwardContext& ctx, double scale, int64_t sliding_window) {
  const int64_t KVH = cache.key.size(2), D = cache.key.size(3);
  cache.key.view({-1, KVH, D}).index_copy_(0, ctx.slot_mapping, k.to(cache.key.scalar_type()));
  cache.value.view({-1, KVH, D}).index_copy_(0, ctx.slot_mapping, v.to(cache.value.scalar_type()));

  return ops::paged_attention(ctx.backend, q, cache.key, cache.value, ctx.seqs, ctx.device_seqs, ctx.block_size, scale,
                              sliding_window);
}

}  // namespace izwi
