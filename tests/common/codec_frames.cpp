#include "common/codec_frames.h"

#include "codec/codec_decoder.h"
#include "codec/warm_codec_states.h"
#include "kernels/backend.h"

namespace izwi::testing {

at::Tensor decode_frames(const std::string& codec_dir, const std::vector<std::vector<int32_t>>& frames) {
  const std::unique_ptr<CodecDecoder> codec = load_codec_decoder(codec_dir, Backend::host());
  return codec->decode(frames_to_codes(frames, 0, frames.size()));
}

}  // namespace izwi::testing
