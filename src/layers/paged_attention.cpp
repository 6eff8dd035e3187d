#include "layers/paged_attention.h"

#include <limits>

#include "kernels/cpu/paged_attention_cpu.h"

namespace izwi {

namespace {

at::Tensor attention_torch(const at::Tensor& q, const LayerCache& cache, const ForwardContext& ctx, double scale,
                           int64_t sliding_window) {
  const int64_t H = q.size(1), D = q.size(2), KVH = cache.key.size(2), BS = ctx.block_size;
  const int64_t group = H / KVH;
  at::Tensor out = at::empty_like(q);
  auto long_options = at::TensorOptions().dtype(at::kLong);
  for (const SeqSlice& s : ctx.seqs) {
    const int64_t context = s.start_pos + s.length;
    const int64_t num_blocks = (context + BS - 1) / BS;
    std::vector<int64_t> ids(s.block_table->begin(), s.block_table->begin() + num_blocks);
    at::Tensor blocks = at::tensor(ids, long_options).to(q.device());
    // [KVH, context, D]
    at::Tensor k =
        cache.key.index_select(0, blocks).reshape({num_blocks * BS, KVH, D}).narrow(0, 0, context).permute({1, 0, 2});
    at::Tensor v =
        cache.value.index_select(0, blocks).reshape({num_blocks * BS, KVH, D}).narrow(0, 0, context).permute({1, 0, 2});
    // Query heads of one KV head are consecutive: [KVH, group * length, D]
    at::Tensor qs = q.narrow(0, s.offset, s.length)
                        .reshape({s.length, KVH, group, D})
                        .permute({1, 2, 0, 3})
                        .reshape({KVH, group * s.length, D});
    at::Tensor scores = at::matmul(qs.to(at::kFloat), k.to(at::kFloat).transpose(1, 2)) * scale;
    scores = scores.view({KVH, group, s.length, context});
    at::Tensor query_pos = at::arange(s.start_pos, context, long_options.device(q.device())).unsqueeze(1);
    at::Tensor key_pos = at::arange(context, long_options.device(q.device())).unsqueeze(0);
    at::Tensor hidden = key_pos > query_pos;
    if (sliding_window > 0) hidden = hidden.logical_or(key_pos <= query_pos - sliding_window);
    scores.masked_fill_(hidden, -std::numeric_limits<float>::infinity());
    at::Tensor probs = at::softmax(scores, -1).view({KVH, group * s.length, context});
    at::Tensor o = at::matmul(probs, v.to(at::kFloat)).view({KVH, group, s.length, D}).permute({2, 0, 1, 3});
    out.narrow(0, s.offset, s.length).copy_(o.reshape({s.length, H, D}));
  }
  return out;
}

}  // namespace

at::Tensor paged_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, LayerCache& cache,
                           const ForwardContext& ctx, double scale, int64_t sliding_window) {
  const int64_t KVH = cache.key.size(2), D = cache.key.size(3);
  cache.key.view({-1, KVH, D}).index_copy_(0, ctx.slot_mapping, k.to(cache.key.scalar_type()));
  cache.value.view({-1, KVH, D}).index_copy_(0, ctx.slot_mapping, v.to(cache.value.scalar_type()));

  if (ctx.fast_kernels && q.scalar_type() == at::kFloat && cache.key.scalar_type() == at::kFloat) {
    at::Tensor qc = q.contiguous();
    at::Tensor out = at::empty_like(qc);
    paged_attention_cpu(
        qc.data_ptr<float>(), cache.key.data_ptr<float>(), cache.value.data_ptr<float>(), out.data_ptr<float>(),
        ctx.seqs, PagedAttentionShape{q.size(1), KVH, D, ctx.block_size, sliding_window}, static_cast<float>(scale));
    return out;
  }
  return attention_torch(q, cache, ctx, scale, sliding_window).to(q.scalar_type());
}

}  // namespace izwi
