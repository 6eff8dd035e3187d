// The LFM2 short convolution on the GPU, a batch of sequences at once, against short_conv_cpu run
// per sequence: outputs, the updated states and the block-boundary snapshots, in float32, bf16 and
// f16 (weights in float32 or the activations' dtype).

#include <algorithm>
#include <cstring>

#include "cuda/cuda_test_util.h"
#include "cuda/low_precision_test_util.h"
#include "kernels/cpu/short_conv_cpu.h"
#include "kernels/cuda/short_conv_cuda.h"

namespace izwi {
namespace {

using cuda_test::DeviceBuffer;
using cuda_test::expect_close;
using cuda_test::expect_within_ulps;
using cuda_test::random_floats;

// Values as a dtype stores them: the device bytes and the floats they hold.
struct Stored {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

template <typename Bits>
std::vector<uint8_t> bytes_of(const std::vector<Bits>& bits) {
  std::vector<uint8_t> bytes(bits.size() * sizeof(Bits));
  std::memcpy(bytes.data(), bits.data(), bytes.size());
  return bytes;
}

Stored store(const std::vector<float>& values, ElementDtype dtype) {
  switch (dtype) {
    case ElementDtype::Float32:
      return {bytes_of(values), values};
    case ElementDtype::BFloat16:
      return {bytes_of(cuda_test::to_bf16(values)), cuda_test::round_bf16(values)};
    case ElementDtype::Float16:
      break;
  }
  const std::vector<uint16_t> bits = cuda_test::to_f16(values);
  return {bytes_of(bits), cuda_test::from_f16(bits)};
}

std::vector<float> values_of(const std::vector<uint8_t>& bytes, ElementDtype dtype) {
  if (dtype == ElementDtype::Float32) {
    std::vector<float> values(bytes.size() / sizeof(float));
    std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }
  std::vector<uint16_t> bits(bytes.size() / 2);
  std::memcpy(bits.data(), bytes.data(), bytes.size());
  return dtype == ElementDtype::BFloat16 ? cuda_test::from_bf16(bits) : cuda_test::from_f16(bits);
}

int mantissa_bits(ElementDtype dtype) {
  return dtype == ElementDtype::Float32    ? 23
         : dtype == ElementDtype::BFloat16 ? cuda_test::kBf16Mantissa
                                           : cuda_test::kF16Mantissa;
}

void check_batch(ElementDtype activations, ElementDtype weights) {
  SCOPED_TRACE(::testing::Message() << "activations " << static_cast<int>(activations) << ", weights "
                                    << static_cast<int>(weights));
  const int64_t channels = 1024, kernel = 3, width = kernel - 1, block_size = 16, slots = 4, max_blocks = 8;
  // Prefill chunks, decode steps and a chunk that crosses block boundaries; slot order shuffled.
  const std::vector<DeviceSeq> seqs = {{0, 40, 0, 2}, {40, 1, 15, 0}, {41, 1, 7, 3}, {42, 21, 11, 1}};
  const int64_t tokens = 63;
  std::vector<int32_t> tables(seqs.size() * max_blocks);
  for (size_t i = 0; i < tables.size(); ++i) tables[i] = static_cast<int32_t>(i);  // distinct blocks
  const int64_t blocks = static_cast<int64_t>(tables.size());

  const Stored bx = store(random_floats(tokens * channels, 6), activations);
  const Stored weight_t = store(random_floats(kernel * channels, 7), weights);
  const Stored bias = store(random_floats(channels, 8), weights);
  const Stored state0 = store(random_floats(slots * width * channels, 9), activations);

  std::vector<float> out(tokens * channels), state = state0.values, snapshots(blocks * width * channels, 0.0f);
  for (size_t i = 0; i < seqs.size(); ++i) {
    const DeviceSeq& s = seqs[i];
    std::vector<float> window((width + s.length) * channels);
    float* slot = state.data() + s.state_slot * width * channels;
    short_conv_cpu(bx.values.data() + s.offset * channels, s.length, channels, kernel, weight_t.values.data(),
                   bias.values.data(), slot, window.data(), out.data() + s.offset * channels);
    // As ShortConv: the state after each block's last position, from the window.
    for (int64_t boundary = (s.start_pos / block_size + 1) * block_size; boundary <= s.start_pos + s.length;
         boundary += block_size) {
      const int32_t block = tables[i * max_blocks + boundary / block_size - 1];
      std::copy_n(window.data() + (boundary - s.start_pos) * channels, width * channels,
                  snapshots.data() + block * width * channels);
    }
  }

  DeviceBuffer<uint8_t> d_bx(bx.bytes), d_w(weight_t.bytes), d_bias(bias.bytes), d_state(state0.bytes),
      d_out(store(out, activations).bytes.size()), d_snap(store(snapshots, activations).bytes.size());
  DeviceBuffer<DeviceSeq> d_seqs(seqs);
  DeviceBuffer<int32_t> d_tables(tables);
  ShortConvCudaArgs args{};
  args.bx = d_bx.get();
  args.out = d_out.get();
  args.weight_t = d_w.get();
  args.bias = d_bias.get();
  args.state = d_state.get();
  args.seqs = d_seqs.get();
  args.num_seqs = static_cast<int32_t>(seqs.size());
  args.channels = channels;
  args.kernel = kernel;
  args.snapshots = d_snap.get();
  args.block_tables = d_tables.get();
  args.table_stride = max_blocks;
  args.block_size = block_size;
  args.activations = activations;
  args.weights = weights;
  short_conv_cuda(args, nullptr);
  // Sums in float32 in another order than the CPU's, then one rounding to the activations' dtype.
  expect_within_ulps(values_of(d_out.to_host(), activations), store(out, activations).values,
                     mantissa_bits(activations), 1.0f, 1e-6f);
  // States and snapshots hold inputs, exactly.
  expect_close(values_of(d_state.to_host(), activations), state, 0.0f);
  expect_close(values_of(d_snap.to_host(), activations), snapshots, 0.0f);
}

TEST(ShortConvCuda, BatchMatchesCpuPerSequence) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  check_batch(ElementDtype::Float32, ElementDtype::Float32);
}

TEST(ShortConvCuda, Bf16AndF16BatchesMatchCpuPerSequence) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  check_batch(ElementDtype::BFloat16, ElementDtype::BFloat16);
  check_batch(ElementDtype::BFloat16, ElementDtype::Float32);
  check_batch(ElementDtype::Float16, ElementDtype::Float16);
  check_batch(ElementDtype::Float16, ElementDtype::Float32);
}

TEST(ShortConvCuda, RefusesWeightsInAnotherLowPrecisionDtype) {
  ShortConvCudaArgs args{};
  args.kernel = 3;
  args.activations = ElementDtype::BFloat16;
  args.weights = ElementDtype::Float16;
  EXPECT_THROW(short_conv_cuda(args, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace izwi
