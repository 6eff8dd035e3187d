#include "common/codec_frames.h"

#include "codec/codec_decoder.h"

namespace izwi::testing {

at::Tensor decode_frames(const std::string& codec_dir, const std::vector<std::vector<int32_t>>& frames) {
  const std::unique_ptr<CodecDecoder> codec = load_codec_decoder(codec_dir, at::kFloat, at::kCPU);
  at::Tensor codes =
      at::empty({static_cast<int64_t>(frames.at(0).size()), static_cast<int64_t>(frames.size())}, at::kLong);
  for (size_t f = 0; f < frames.size(); ++f) {
    for (size_t k = 0; k < frames[f].size(); ++k)
      codes[static_cast<int64_t>(k)][static_cast<int64_t>(f)] = frames[f][k];
  }
  return codec->decode(codes);
}

}  // namespace izwi::testing
