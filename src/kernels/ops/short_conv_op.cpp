#include "kernels/ops/short_conv_op.h"

#include "common/op_profile.h"
#include "kernels/cpu/short_conv_cpu.h"
#if IZWI_WITH_CUDA
#include "kernels/cuda/short_conv_cuda.h"
#include "kernels/cuda_stream.h"
#endif

namespace izwi::ops {

namespace {

// One sequence: returns the window [kernel - 1 + length, channels] = [old state; bx], whose row r
// holds the input at position start_pos - (kernel - 1) + r.
at::Tensor short_conv_sequence(const Backend& backend, const at::Tensor& bx, at::Tensor state,
                               const ShortConvTensors& layer, at::Tensor out) {
  const int64_t length = bx.size(0), channels = bx.size(1), kernel = layer.weight_t.size(0), width = kernel - 1;
  if (backend.cpu_kernels() && bx.is_cpu() && bx.scalar_type() == at::kFloat && bx.is_contiguous() &&
      out.is_contiguous()) {
    at::Tensor window = at::empty({width + length, channels}, bx.options());
    short_conv_cpu(bx.data_ptr<float>(), length, channels, kernel, layer.weight_t.data_ptr<float>(),
                   layer.bias.defined() ? layer.bias.data_ptr<float>() : nullptr, state.data_ptr<float>(),
                   window.data_ptr<float>(), out.data_ptr<float>());
    return window;
  }
  const at::Tensor window = at::cat({state, bx}, 0);
  at::Tensor sum = window.narrow(0, 0, length) * layer.weight_t[0];
  for (int64_t k = 1; k < kernel; ++k) sum += window.narrow(0, k, length) * layer.weight_t[k];
  if (layer.bias.defined()) sum += layer.bias;
  out.copy_(sum);
  state.copy_(window.narrow(0, length, width));
  return window;
}

}  // namespace

void short_conv(const Backend& backend, const at::Tensor& bx, const ShortConvTensors& layer,
                const std::vector<SeqSlice>& seqs, const DeviceStepArrays& device_seqs, int64_t block_size,
                at::Tensor& out) {
  const OpTimer timer(ProfiledOp::ShortConv, bx.size(0));
  const int64_t width = layer.weight_t.size(0) - 1;
#if IZWI_WITH_CUDA
  const bool float32 = bx.scalar_type() == at::kFloat && layer.weight_t.scalar_type() == at::kFloat &&
                       layer.states.scalar_type() == at::kFloat && layer.snapshots.scalar_type() == at::kFloat;
  if (backend.cuda_kernels() && bx.is_cuda() && float32 && device_seqs.staged() && bx.is_contiguous() &&
      out.is_contiguous() && layer.weight_t.size(0) <= kShortConvMaxKernel) {
    ShortConvCudaArgs args{};
    args.bx = bx.data_ptr<float>();
    args.out = out.data_ptr<float>();
    args.weight_t = layer.weight_t.data_ptr<float>();
    args.bias = layer.bias.defined() ? layer.bias.data_ptr<float>() : nullptr;
    args.state = layer.states.data_ptr<float>();
    args.seqs = device_seqs.seqs;
    args.num_seqs = device_seqs.num_seqs;
    args.channels = bx.size(1);
    args.kernel = layer.weight_t.size(0);
    args.snapshots = layer.snapshots.data_ptr<float>();
    args.block_tables = device_seqs.block_tables;
    args.table_stride = device_seqs.table_stride;
    args.block_size = block_size;
    short_conv_cuda(args, current_cuda_stream());
    return;
  }
#endif
  for (const SeqSlice& s : seqs) {
    const at::Tensor window = short_conv_sequence(backend, bx.narrow(0, s.offset, s.length), layer.states[s.state_slot],
                                                  layer, out.narrow(0, s.offset, s.length));
    const std::vector<int32_t>& table = *s.block_table;
    for (int64_t boundary = (s.start_pos / block_size + 1) * block_size; boundary <= s.start_pos + s.length;
         boundary += block_size) {
      layer.snapshots[table[boundary / block_size - 1]].copy_(window.narrow(0, boundary - s.start_pos, width));
    }
  }
}

}  // namespace izwi::ops
