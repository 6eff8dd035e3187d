#include "kernels/ops/prefill_attention_op.h"

#include <algorithm>
#include <cmath>

#if __has_include(<ATen/ops/scaled_dot_product_attention.h>)
#define IZWI_PUBLIC_SDPA 1
#else
#define IZWI_PUBLIC_SDPA 0
#endif

namespace izwi::ops {

namespace {

// Host values on `device` without waiting for it: pinned memory and an asynchronous copy
// (libtorch's caching host allocator keeps the buffer until the copy has run).
at::Tensor to_device(const std::vector<int64_t>& values, const at::Device& device) {
  at::Tensor host = at::empty({static_cast<int64_t>(values.size())},
                              at::TensorOptions().dtype(at::kLong).pinned_memory(device.is_cuda()));
  std::copy(values.begin(), values.end(), host.data_ptr<int64_t>());
  return device.is_cpu() ? host : host.to(device, at::kLong, /*non_blocking=*/true);
}

// Whether a bottom-right causal chunk (rows after a cached prefix, no window) can run
// FlashAttention directly: libtorch 2.x's flash kernel (sm80+, bf16 / f16, head_dim a multiple
// of 8 up to 256) aligns its causal diagonal bottom-right when rows < context, so it needs no mask.
bool lower_right_flash(const at::Tensor& q, int32_t cuda_sm_version) {
#if IZWI_PUBLIC_SDPA
  const int64_t D = q.size(-1);
  return q.is_cuda() && cuda_sm_version >= 80 && (q.scalar_type() == at::kBFloat16 || q.scalar_type() == at::kHalf) &&
         D % 8 == 0 && D <= 256;
#else
  return false;
#endif
}

// q [1, H, L, D], k / v [1, H, S, D]; `visible` [L, S] boolean (true = attends), or undefined
// for causal attention aligned bottom-right (top-left is the same where L == S).
at::Tensor sdpa(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& visible,
                double scale) {
  const bool causal = !visible.defined();
#if IZWI_PUBLIC_SDPA
  // libtorch 2.x (the CUDA wheels): picks FlashAttention, memory-efficient or cuDNN attention by
  // dtype, device and mask. Its is_causal is top-left; a causal call with L < S is the flash
  // kernel's own (bottom-right), which callers reach only where lower_right_flash holds.
  if (causal && q.size(2) < k.size(2)) {
    return std::get<0>(at::_scaled_dot_product_flash_attention(q, k, v, 0.0, /*is_causal=*/true,
                                                               /*return_debug_mask=*/false, scale));
  }
  return causal ? at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true, scale)
                : at::scaled_dot_product_attention(q, k, v, visible, 0.0, /*is_causal=*/false, scale);
#else
  // libtorch 1.13 (Debian's, CPU): the op's private predecessor, without a scale argument (it
  // multiplies q by 1 / sqrt(D)), so the scale is folded into q.
  const at::Tensor scaled_q = q * (scale * std::sqrt(static_cast<double>(q.size(-1))));
  return causal ? std::get<0>(at::_scaled_dot_product_attention(scaled_q, k, v, {}, 0.0, false, /*is_causal=*/true))
                : std::get<0>(at::_scaled_dot_product_attention(scaled_q, k, v, visible, 0.0, false, false));
#endif
}

}  // namespace

void prefill_attention(const at::Tensor& q, const at::Tensor& key_pool, const at::Tensor& value_pool,
                       const std::vector<SeqSlice>& seqs, int64_t block_size, double scale, int64_t sliding_window,
                       int32_t cuda_sm_version, at::Tensor& out) {
  if (seqs.empty()) return;
  const bool flash_after_prefix = sliding_window <= 0 && lower_right_flash(q, cuda_sm_version);
  const int64_t H = q.size(1), D = q.size(2), KVH = key_pool.size(2), BS = block_size;
  const int64_t group = H / KVH;
  // Every sequence's block ids in one copy to the device.
  std::vector<int64_t> ids;
  for (const SeqSlice& s : seqs) {
    const int64_t num_blocks = (s.start_pos + s.length + BS - 1) / BS;
    ids.insert(ids.end(), s.block_table->begin(), s.block_table->begin() + num_blocks);
  }
  const at::Tensor all_blocks = to_device(ids, q.device());
  const auto long_options = at::TensorOptions().dtype(at::kLong).device(q.device());
  int64_t first_block = 0;
  for (const SeqSlice& s : seqs) {
    const int64_t context = s.start_pos + s.length;
    const int64_t num_blocks = (context + BS - 1) / BS;
    const at::Tensor blocks = all_blocks.narrow(0, first_block, num_blocks);
    first_block += num_blocks;
    // [1, H, context, D] in q's dtype: query head h reads KV head h / group.
    const auto gather = [&](const at::Tensor& pool) {
      return pool.index_select(0, blocks)
          .view({num_blocks * BS, KVH, 1, D})
          .narrow(0, 0, context)
          .to(q.scalar_type())
          .expand({context, KVH, group, D})
          .reshape({context, H, D})
          .permute({1, 0, 2})
          .unsqueeze(0);
    };
    const at::Tensor qs = q.narrow(0, s.offset, s.length).permute({1, 0, 2}).unsqueeze(0);
    at::Tensor visible;
    if ((s.start_pos > 0 && !flash_after_prefix) || sliding_window > 0) {
      // Row i stands at start_pos + i: the causal diagonal is bottom-right aligned, which
      // is_causal (top-left when rows != context) does not express.
      const at::Tensor query_pos = at::arange(s.start_pos, context, long_options).unsqueeze(1);
      const at::Tensor key_pos = at::arange(context, long_options).unsqueeze(0);
      visible = key_pos <= query_pos;
      if (sliding_window > 0) visible = visible.logical_and(key_pos > query_pos - sliding_window);
    }
    const at::Tensor o = sdpa(qs, gather(key_pool), gather(value_pool), visible, scale);
    out.narrow(0, s.offset, s.length).copy_(o.squeeze(0).permute({1, 0, 2}));
  }
}

PrefillSplit split_prefill(const std::vector<SeqSlice>& seqs, const DeviceStepArrays& device_seqs) {
  PrefillSplit split;
  std::vector<int64_t> keep;
  int64_t max_length = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    if (takes_prefill_attention(seqs[i])) {
      split.prefill.push_back(seqs[i]);
    } else {
      split.paged.push_back(seqs[i]);
      keep.push_back(static_cast<int64_t>(i));
      max_length = std::max(max_length, seqs[i].length);
    }
  }
  split.paged_device = device_seqs;
  if (split.prefill.empty()) return split;
  if (keep.empty()) {  // Nothing for the paged kernel.
    split.paged_device.num_seqs = 0;
    split.paged_device.max_length = 0;
    return split;
  }
  // The staged words hold the DeviceSeq array (4 words each) and the int32 block tables; the kept
  // sequences' rows of both, packed the same way into a buffer of their own.
  constexpr int64_t kSeqWords = sizeof(DeviceSeq) / sizeof(int64_t);
  const at::Tensor& words = device_seqs.words;
  const int64_t n = device_seqs.num_seqs, stride = device_seqs.table_stride, kept = static_cast<int64_t>(keep.size());
  const int64_t seqs_word = reinterpret_cast<const int64_t*>(device_seqs.seqs) - words.data_ptr<int64_t>();
  const int64_t tables_word = reinterpret_cast<const int64_t*>(device_seqs.block_tables) - words.data_ptr<int64_t>();
  const at::Tensor rows = to_device(keep, words.device());
  at::Tensor packed = at::empty({kSeqWords * kept + (kept * stride + 1) / 2}, words.options());
  packed.narrow(0, 0, kSeqWords * kept)
      .view({kept, kSeqWords})
      .copy_(words.narrow(0, seqs_word, kSeqWords * n).view({n, kSeqWords}).index_select(0, rows));
  const at::Tensor tables = words.narrow(0, tables_word, (n * stride + 1) / 2).view(at::kInt).narrow(0, 0, n * stride);
  packed.narrow(0, kSeqWords * kept, (kept * stride + 1) / 2)
      .view(at::kInt)
      .narrow(0, 0, kept * stride)
      .view({kept, stride})
      .copy_(tables.view({n, stride}).index_select(0, rows));
  split.paged_device.words = packed;
  split.paged_device.seqs = reinterpret_cast<const DeviceSeq*>(packed.data_ptr<int64_t>());
  split.paged_device.block_tables = reinterpret_cast<const int32_t*>(packed.data_ptr<int64_t>() + kSeqWords * kept);
  split.paged_device.num_seqs = static_cast<int32_t>(kept);
  split.paged_device.table_stride = stride;
  split.paged_device.max_length = max_length;
  return split;
}

}  // namespace izwi::ops
