#include "layers/short_conv.h"

#include "common/check.h"
#include "kernels/ops/short_conv_op.h"

namespace izwi {

ShortConv::ShortConv(WeightSource& source, const std::string& prefix, int64_t hidden_size, int64_t kernel_size,
                     bool bias)
    : hidden_size_(hidden_size), kernel_size_(kernel_size) {
  in_proj_ = Linear::load(source, prefix + ".in_proj", 3 * hidden_size, hidden_size, bias);
  out_proj_ = Linear::load(source, prefix + ".out_proj", hidden_size, hidden_size, bias);
  // Stored [kernel, hidden] so tap k is a contiguous row matching the [positions, channels] state.
  conv_weight_ = source.take(prefix + ".conv.weight", {hidden_size, 1, kernel_size})
                     .reshape({hidden_size, kernel_size})
                     .t()
                     .contiguous();
  if (bias) conv_bias_ = source.take(prefix + ".conv.bias", {hidden_size});
}

at::Tensor ShortConv::operator()(const at::Tensor& x, LayerCache& cache, const ForwardContext& ctx) const {
  const int64_t h = hidden_size_;
  const at::Tensor bcx = in_proj_(x, ctx);
  const at::Tensor c = bcx.narrow(1, h, h);
  const at::Tensor bx = (bcx.narrow(1, 0, h) * bcx.narrow(1, 2 * h, h)).contiguous();
  for (const SeqSlice& s : ctx.seqs) {
    IZWI_CHECK(s.state_slot >= 0, "short conv needs a state slot");
    if (!s.fresh_state) continue;
    at::Tensor state = cache.state[s.state_slot];  // [width, h]: the last inputs, oldest first
    if (s.start_pos == 0) {
      state.zero_();
    } else {
      IZWI_CHECK(s.restore_block >= 0, "resuming at position {} needs a snapshot block", s.start_pos);
      state.copy_(cache.state_snapshots[s.restore_block]);
    }
  }
  at::Tensor conv = at::empty_like(bx);
  ops::short_conv(*ctx.backend, bx, {conv_weight_, conv_bias_, cache.state, cache.state_snapshots}, ctx.seqs,
                  ctx.device_seqs, ctx.block_size, conv);
  return out_proj_(c * conv, ctx);
}

LayerCacheSpec ShortConv::cache_spec() const {
  LayerCacheSpec spec;
  spec.kind = LayerCacheSpec::Kind::ShortConv;
  spec.channels = hidden_size_;
  spec.width = kernel_size_ - 1;
  return spec;
}

}  // namespace izwi
