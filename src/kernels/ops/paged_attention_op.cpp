#include "kernels/ops/paged_attention_op.h"

#include <algorithm>
#include <limits>

#include "common/op_profile.h"
#include "kernels/cpu/paged_attention_cpu.h"
#if IZWI_WITH_CUDA
#include "kernels/cuda/paged_attention_cuda.h"
#include "kernels/cuda/paged_decode_attention_cuda.h"
#include "kernels/cuda_stream.h"
#include "kernels/ops/prefill_attention_op.h"
#endif

namespace izwi::ops {

namespace {

at::Tensor attention_torch(const at::Tensor& q, const at::Tensor& key_pool, const at::Tensor& value_pool,
                           const std::vector<SeqSlice>& seqs, int64_t block_size, double scale,
                           int64_t sliding_window) {
  const int64_t H = q.size(1), D = q.size(2), KVH = key_pool.size(2), BS = block_size;
  const int64_t group = H / KVH;
  at::Tensor out = at::empty_like(q);
  auto long_options = at::TensorOptions().dtype(at::kLong);
  for (const SeqSlice& s : seqs) {
    const int64_t context = s.start_pos + s.length;
    const int64_t num_blocks = (context + BS - 1) / BS;
    std::vector<int64_t> ids(s.block_table->begin(), s.block_table->begin() + num_blocks);
    at::Tensor blocks = at::tensor(ids, long_options).to(q.device());
    // [KVH, context, D]
    at::Tensor k =
        key_pool.index_select(0, blocks).reshape({num_blocks * BS, KVH, D}).narrow(0, 0, context).permute({1, 0, 2});
    at::Tensor v =
        value_pool.index_select(0, blocks).reshape({num_blocks * BS, KVH, D}).narrow(0, 0, context).permute({1, 0, 2});
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

at::Tensor paged_attention(const Backend& backend, const at::Tensor& q, const at::Tensor& key_pool,
                           const at::Tensor& value_pool, const std::vector<SeqSlice>& seqs,
                           const DeviceStepArrays& device_seqs, int64_t block_size, double scale,
                           int64_t sliding_window) {
  const OpTimer timer(ProfiledOp::Attention, q.size(0));
  const bool bf16_pools = key_pool.scalar_type() == at::kBFloat16 && value_pool.scalar_type() == at::kBFloat16;
  if (backend.cpu_kernels() && q.is_cpu() && q.scalar_type() == at::kFloat &&
      (key_pool.scalar_type() == at::kFloat || bf16_pools)) {
    const at::Tensor qc = q.contiguous();
    at::Tensor out = at::empty_like(qc);
    const PagedAttentionShape shape{q.size(1), key_pool.size(2), key_pool.size(3), block_size, sliding_window};
    if (bf16_pools) {
      paged_attention_cpu(qc.data_ptr<float>(), static_cast<const uint16_t*>(key_pool.data_ptr()),
                          static_cast<const uint16_t*>(value_pool.data_ptr()), out.data_ptr<float>(), seqs, shape,
                          static_cast<float>(scale));
    } else {
      paged_attention_cpu(qc.data_ptr<float>(), key_pool.data_ptr<float>(), value_pool.data_ptr<float>(),
                          out.data_ptr<float>(), seqs, shape, static_cast<float>(scale));
    }
    return out;
  }
#if IZWI_WITH_CUDA
  const at::ScalarType pool_type = key_pool.scalar_type();
  const bool cuda_pools = value_pool.scalar_type() == pool_type &&
                          (pool_type == at::kFloat || pool_type == at::kBFloat16 || pool_type == at::kHalf);
  if (backend.cuda_kernels() && q.is_cuda() && cuda_pools && device_seqs.staged()) {
    // Long prefill chunks go through prefill_attention (tensor cores), the step's other sequences
    // through the paged kernels below (this call again, with those alone), so none is computed
    // twice. Graph-captured steps are decode-only: they never take this branch.
    if (std::any_of(seqs.begin(), seqs.end(), takes_prefill_attention)) {
      const PrefillSplit split = split_prefill(seqs, device_seqs);
      at::Tensor out;
      if (split.paged.empty()) {
        out = at::empty_like(q);
      } else {
        const OpProfilePause timed_once;  // by this call's timer
        out = paged_attention(backend, q, key_pool, value_pool, split.paged, split.paged_device, block_size, scale,
                              sliding_window);
      }
      prefill_attention(q, key_pool, value_pool, split.prefill, block_size, scale, sliding_window,
                        backend.cuda_sm_version(), out);
      return out;
    }
    // The kernels compute in float32, as the CPU kernel does, and read and write float32 or bf16
    // activations; others (f16) go through float32.
    const bool bf16_q = q.scalar_type() == at::kBFloat16;
    const at::Tensor qc = (bf16_q ? q : q.to(at::kFloat)).contiguous();
    at::Tensor out = at::empty_like(qc);
    PagedAttentionCudaArgs args{};
    args.q = qc.data_ptr();
    args.key_pool = key_pool.data_ptr();
    args.value_pool = value_pool.data_ptr();
    args.out = out.data_ptr();
    args.activation_dtype = bf16_q ? ElementDtype::BFloat16 : ElementDtype::Float32;
    args.kv_dtype = pool_type == at::kFloat      ? KvDtype::Float32
                    : pool_type == at::kBFloat16 ? KvDtype::BFloat16
                                                 : KvDtype::Float16;
    args.seqs = device_seqs.seqs;
    args.block_tables = device_seqs.block_tables;
    args.num_seqs = device_seqs.num_seqs;
    args.table_stride = device_seqs.table_stride;
    args.max_length = device_seqs.max_length;
    args.num_heads = q.size(1);
    args.num_kv_heads = key_pool.size(2);
    args.head_dim = key_pool.size(3);
    args.block_size = block_size;
    args.sliding_window = sliding_window;
    args.scale = static_cast<float>(scale);
    if (paged_decode_attention_applies(args)) {
      // Decode-only steps: split-K, its workspace from libtorch's allocator (a graph's pool when
      // captured), sized by the step's arguments alone.
      const PagedDecodePlan plan = plan_paged_decode_attention(args, backend.cuda_multiprocessors());
      const at::Tensor workspace = at::empty({plan.workspace_floats}, q.options().dtype(at::kFloat));
      paged_decode_attention_cuda(args, plan, workspace.data_ptr<float>(), current_cuda_stream());
    } else {
      paged_attention_cuda(args, current_cuda_stream());
    }
    return out.to(q.scalar_type());  // no copy unless q was neither float32 nor bf16
  }
#endif
  return attention_torch(q, key_pool, value_pool, seqs, block_size, scale, sliding_window).to(q.scalar_type());
}

}  // namespace izwi::ops
