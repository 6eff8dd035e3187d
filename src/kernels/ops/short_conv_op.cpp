#include "kernels/ops/short_conv_op.h"

#include <optional>

#include "common/check.h"
#include "common/op_profile.h"
#include "kernels/cpu/short_conv_cpu.h"
#if IZWI_WITH_CUDA
#include "kernels/cuda/short_conv_cuda.h"
#include "kernels/cuda_stream.h"
#include "kernels/ops/cuda_element_dtype.h"
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
  // The kernel reads each sequence from the staged device arrays, so a CUDA graph can capture it;
  // the per-sequence loop below bakes the capture batch's state slots into the graph.
  const at::ScalarType type = bx.scalar_type();
  const std::optional<ElementDtype> activations = cuda_element_dtype(type, true);
  const std::optional<ElementDtype> weights = cuda_element_dtype(layer.weight_t.scalar_type(), true);
  const bool dtypes = activations && weights && (*weights == ElementDtype::Float32 || *weights == *activations) &&
                      (!layer.bias.defined() || layer.bias.scalar_type() == layer.weight_t.scalar_type()) &&
                      layer.states.scalar_type() == type && layer.snapshots.scalar_type() == type;
  if (backend.cuda_kernels() && bx.is_cuda() && dtypes && device_seqs.staged() && bx.is_contiguous() &&
      out.is_contiguous() && layer.weight_t.size(0) <= kShortConvMaxKernel) {
    ShortConvCudaArgs args{};
    args.bx = bx.data_ptr();
    args.out = out.data_ptr();
    args.weight_t = layer.weight_t.data_ptr();
    args.bias = layer.bias.defined() ? layer.bias.data_ptr() : nullptr;
    args.state = layer.states.data_ptr();
    args.seqs = device_seqs.seqs;
    args.num_seqs = device_seqs.num_seqs;
    args.channels = bx.size(1);
    args.kernel = layer.weight_t.size(0);
    args.snapshots = layer.snapshots.data_ptr();
    args.block_tables = device_seqs.block_tables;
    args.table_stride = device_seqs.table_stride;
    args.block_size = block_size;
    args.activations = *activations;
    args.weights = *weights;
    short_conv_cuda(args, current_cuda_stream());
    return;
  }
  IZWI_CHECK(!bx.is_cuda() || !current_cuda_stream_capturing(),
             "short conv: a CUDA graph capture reached the per-sequence path ({} activations, {} weights)",
             c10::toString(type), c10::toString(layer.weight_t.scalar_type()));
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
