#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elements.cuh"
#include "kernels/cuda/short_conv_cuda.h"

namespace izwi {

namespace {

constexpr int kThreads = 128;

// One thread per (sequence, channel) walks the sequence's positions in order, holding the last
// kernel inputs in registers (float32); neighbouring threads read neighbouring channels (coalesced
// rows). T: inputs, outputs, states and snapshots; W: weights and bias.
template <typename T, typename W>
__global__ void short_conv_kernel(ShortConvCudaArgs a) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
  if (c >= a.channels) return;
  const DeviceSeq s = a.seqs[blockIdx.y];
  const int64_t C = a.channels, width = a.kernel - 1;
  const T* bx = static_cast<const T*>(a.bx);
  T* out = static_cast<T*>(a.out);
  const W* weight_t = static_cast<const W*>(a.weight_t);
  const W* bias = static_cast<const W*>(a.bias);
  T* state = static_cast<T*>(a.state) + static_cast<int64_t>(s.state_slot) * width * C + c;
  float w[kShortConvMaxKernel], x[kShortConvMaxKernel];  // x[k]: the input at t + k - width
#pragma unroll
  for (int k = 0; k < kShortConvMaxKernel; ++k) {
    w[k] = k < a.kernel ? to_float(weight_t[k * C + c]) : 0.0f;
    x[k] = k < width ? to_float(state[k * C]) : 0.0f;
  }
  const float b = bias != nullptr ? to_float(bias[c]) : 0.0f;
  for (int64_t t = 0; t < s.length; ++t) {
    x[width] = to_float(bx[(s.offset + t) * C + c]);
    float acc = b;
#pragma unroll
    for (int k = 0; k < kShortConvMaxKernel; ++k) {
      if (k < a.kernel) acc += w[k] * x[k];
    }
    out[(s.offset + t) * C + c] = from_float<T>(acc);
#pragma unroll
    for (int k = 0; k + 1 < kShortConvMaxKernel; ++k) {
      if (k < width) x[k] = x[k + 1];
    }
    // After position p = start_pos + t, x[0 .. width) are its last inputs: a block boundary's snapshot.
    const int64_t next = s.start_pos + t + 1;
    if (a.snapshots != nullptr && next % a.block_size == 0) {
      const int32_t block = a.block_tables[blockIdx.y * a.table_stride + next / a.block_size - 1];
      T* snap = static_cast<T*>(a.snapshots) + static_cast<int64_t>(block) * width * C + c;
      for (int64_t k = 0; k < width; ++k) snap[k * C] = from_float<T>(x[k]);  // exact: x holds T values
    }
  }
#pragma unroll
  for (int k = 0; k < kShortConvMaxKernel; ++k) {
    if (k < width) state[k * C] = from_float<T>(x[k]);
  }
}

template <typename T>
void launch(const ShortConvCudaArgs& args, dim3 grid, cudaStream_t stream) {
  if (args.weights == ElementDtype::Float32) {
    short_conv_kernel<T, float><<<grid, kThreads, 0, stream>>>(args);
  } else {
    short_conv_kernel<T, T><<<grid, kThreads, 0, stream>>>(args);
  }
}

}  // namespace

void short_conv_cuda(const ShortConvCudaArgs& args, cudaStream_t stream) {
  require(args.kernel >= 1 && args.kernel <= kShortConvMaxKernel, "short_conv_kernel", "kernel size out of range");
  require(args.weights == ElementDtype::Float32 || args.weights == args.activations, "short_conv_kernel",
          "weights in float32 or the activations' dtype");
  require(args.snapshots == nullptr || (args.block_tables != nullptr && args.block_size > 0), "short_conv_kernel",
          "snapshots need block tables and a block size");
  if (args.num_seqs == 0 || args.channels == 0) return;
  require(args.num_seqs <= 65535, "short_conv_kernel", "more sequences than a grid column holds");
  const dim3 grid(static_cast<unsigned>((args.channels + kThreads - 1) / kThreads),
                  static_cast<unsigned>(args.num_seqs));
  switch (args.activations) {
    case ElementDtype::Float32:
      launch<float>(args, grid, stream);
      break;
    case ElementDtype::BFloat16:
      launch<__nv_bfloat16>(args, grid, stream);
      break;
    case ElementDtype::Float16:
      launch<__half>(args, grid, stream);
      break;
  }
  check_launch("short_conv_kernel");
}

}  // namespace izwi
