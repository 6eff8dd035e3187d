// The LFM2 short convolution on the GPU, a batch of sequences at once, against short_conv_cpu run
// per sequence: outputs, the updated states and the block-boundary snapshots.

#include <algorithm>

#include "cuda/cuda_test_util.h"
#include "kernels/cpu/short_conv_cpu.h"
#include "kernels/cuda/short_conv_cuda.h"

namespace izwi {
namespace {

using cuda_test::DeviceBuffer;
using cuda_test::expect_close;
using cuda_test::random_floats;

TEST(ShortConvCuda, BatchMatchesCpuPerSequence) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t channels = 1024, kernel = 3, width = kernel - 1, block_size = 16, slots = 4, max_blocks = 8;
  // Prefill chunks, decode steps and a chunk that crosses block boundaries; slot order shuffled.
  const std::vector<DeviceSeq> seqs = {{0, 40, 0, 2}, {40, 1, 15, 0}, {41, 1, 7, 3}, {42, 21, 11, 1}};
  const int64_t tokens = 63;
  std::vector<int32_t> tables(seqs.size() * max_blocks);
  for (size_t i = 0; i < tables.size(); ++i) tables[i] = static_cast<int32_t>(i);  // distinct blocks
  const int64_t blocks = static_cast<int64_t>(tables.size());

  const std::vector<float> bx = random_floats(tokens * channels, 6);
  const std::vector<float> weight_t = random_floats(kernel * channels, 7);
  const std::vector<float> bias = random_floats(channels, 8);
  const std::vector<float> state0 = random_floats(slots * width * channels, 9);

  std::vector<float> out(tokens * channels), state = state0, snapshots(blocks * width * channels, 0.0f);
  for (size_t i = 0; i < seqs.size(); ++i) {
    const DeviceSeq& s = seqs[i];
    std::vector<float> window((width + s.length) * channels);
    float* slot = state.data() + s.state_slot * width * channels;
    short_conv_cpu(bx.data() + s.offset * channels, s.length, channels, kernel, weight_t.data(), bias.data(), slot,
                   window.data(), out.data() + s.offset * channels);
    // As ShortConv: the state after each block's last position, from the window.
    for (int64_t boundary = (s.start_pos / block_size + 1) * block_size; boundary <= s.start_pos + s.length;
         boundary += block_size) {
      const int32_t block = tables[i * max_blocks + boundary / block_size - 1];
      std::copy_n(window.data() + (boundary - s.start_pos) * channels, width * channels,
                  snapshots.data() + block * width * channels);
    }
  }

  DeviceBuffer<float> d_bx(bx), d_w(weight_t), d_bias(bias), d_state(state0), d_out(tokens * channels),
      d_snap(blocks * width * channels);
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
  short_conv_cuda(args, nullptr);
  expect_close(d_out.to_host(), out, 1e-5f);
  expect_close(d_state.to_host(), state, 0.0f);
  expect_close(d_snap.to_host(), snapshots, 0.0f);
}

}  // namespace
}  // namespace izwi
