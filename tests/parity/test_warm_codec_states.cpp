// Codec states kept after a run of frames (in-context voices' reference): a copy continues
// exactly as a stream that decoded those frames itself, copies are independent, and the least
// recently used state goes first.

#include <gtest/gtest.h>

#include "codec/codec_decoder.h"
#include "codec/warm_codec_states.h"
#include "common/reference.h"
#include "common/test_device.h"
#include "kernels/backend.h"

namespace izwi {
namespace {

const char* const kFixture = "qwen3-tts-codec-decoder-tiny";

std::vector<std::vector<int32_t>> frames_of(const at::Tensor& codes, int64_t first, int64_t count) {
  std::vector<std::vector<int32_t>> frames;
  for (int64_t f = first; f < first + count; ++f) {
    std::vector<int32_t> frame;
    for (int64_t k = 0; k < codes.size(0); ++k) frame.push_back(static_cast<int32_t>(codes[k][f].item<int64_t>()));
    frames.push_back(frame);
  }
  return frames;
}

TEST(WarmCodecStates, ACopyContinuesAsTheStreamThatDecodedTheFramesItself) {
  const testing::ReferenceTensors ref(kFixture);
  const at::Tensor codes = ref.get("codes");
  const auto codec = load_codec_decoder(testing::fixture_dir(kFixture), testing::test_backend());
  const at::Tensor whole = codec->decode(codes);
  WarmCodecStates warm(2);
  const auto reference = frames_of(codes, 0, 12);
  const auto rest = codes.narrow(1, 12, 28);
  auto first = warm.state_after(*codec, reference);
  EXPECT_EQ(warm.misses(), 1);
  auto second = warm.state_after(*codec, reference);
  auto third = warm.state_after(*codec, reference);
  EXPECT_EQ(warm.hits(), 2);
  // Each continues with the rest of the frames exactly as the whole decode; decoding into one
  // (the first, twice as far) does not move the others.
  const at::Tensor tail = whole.slice(0, 12 * 1920);
  EXPECT_LT(testing::max_abs_diff(codec->decode_streaming({first.get()}, {rest})[0], tail), 1e-4);
  EXPECT_LT(testing::max_abs_diff(codec->decode_streaming({second.get(), third.get()}, {rest, rest})[1], tail), 1e-4);
  // A fourth copy, taken after the others decoded, still starts right after the reference.
  auto fourth = warm.state_after(*codec, reference);
  EXPECT_LT(testing::max_abs_diff(codec->decode_streaming({fourth.get()}, {rest})[0], tail), 1e-4);
}

TEST(WarmCodecStates, TheLeastRecentlyUsedStateGoesFirst) {
  const testing::ReferenceTensors ref(kFixture);
  const at::Tensor codes = ref.get("codes");
  const auto codec = load_codec_decoder(testing::fixture_dir(kFixture), testing::test_backend());
  WarmCodecStates warm(2);
  const auto a = frames_of(codes, 0, 3), b = frames_of(codes, 3, 3), c = frames_of(codes, 6, 3);
  warm.state_after(*codec, a);
  warm.state_after(*codec, b);
  warm.state_after(*codec, a);  // a is now the most recent
  warm.state_after(*codec, c);  // evicts b
  EXPECT_EQ(warm.hits(), 1);
  warm.state_after(*codec, a);
  EXPECT_EQ(warm.hits(), 2);
  warm.state_after(*codec, b);
  EXPECT_EQ(warm.hits(), 2);
  EXPECT_EQ(warm.misses(), 4);
}

}  // namespace
}  // namespace izwi
