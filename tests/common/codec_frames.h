#pragma once
// The whole decode of a list of audio frames by a codec folder, as tests compare engine audio to it.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace izwi::testing {

/// `frames` ([frames][codebooks]) decoded at once by the codec in `codec_dir` (float32):
/// [frames * samples_per_frame] samples.
at::Tensor decode_frames(const std::string& codec_dir, const std::vector<std::vector<int32_t>>& frames);

}  // namespace izwi::testing
