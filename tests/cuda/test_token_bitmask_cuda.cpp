// A structured output's token mask applied where the logits are (Sampler::mask_rows on a CUDA
// device): the same -inf ids as the host loop, in float32 and bf16 logits, on the rows asked only.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cuda/cuda_test_util.h"
#include "sampling/token_bitmask.h"

namespace izwi {
namespace {

constexpr int64_t kVocab = 5003;  // not a multiple of 32: the last word is partly past the vocabulary
constexpr int64_t kWords = (kVocab + 31) / 32;

TEST(TokenBitmaskCuda, TheDeviceMaskEqualsTheHostMask) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(7);
  std::vector<uint32_t> words(2 * kWords);
  for (uint32_t& w : words) w = rng();
  words[0] = 0xFFFFFFFFu;  // a full word, the top bit (a negative int32) among them
  words[kWords + 1] = 0;
  const std::vector<int64_t> rows = {3, 1};  // out of order: row i's mask goes to logits row rows[i]
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const at::Tensor logits = at::randn({5, kVocab}).to(dtype);
    at::Tensor host = logits.to(at::kFloat).contiguous();
    for (size_t i = 0; i < rows.size(); ++i) {
      apply_token_bitmask(host.data_ptr<float>() + rows[i] * kVocab, kVocab, words.data() + i * kWords);
    }
    at::Tensor device = logits.to(at::kCUDA);
    const at::Tensor word_tensor = at::from_blob(words.data(), {2, kWords}, at::kInt).clone().to(at::kCUDA);
    apply_token_bitmask(device, at::tensor(rows, at::kLong).to(at::kCUDA), word_tensor);
    const at::Tensor back = device.to(at::kCPU, at::kFloat);
    // Rounded to the logits' dtype on both sides; -inf exactly where a bit is clear.
    EXPECT_TRUE(at::equal(back, host.to(dtype).to(at::kFloat))) << dtype;
    int64_t masked = 0;
    for (int64_t r = 0; r < 5; ++r) {
      for (int64_t id = 0; id < kVocab; ++id) masked += std::isinf(back[r][id].item<float>()) ? 1 : 0;
    }
    int64_t cleared = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      for (int64_t id = 0; id < kVocab; ++id) cleared += ((words[i * kWords + id / 32] >> (id % 32)) & 1u) == 0;
    }
    EXPECT_EQ(masked, cleared) << dtype;
  }
}

}  // namespace
}  // namespace izwi
