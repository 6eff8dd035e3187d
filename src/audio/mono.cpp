#include "audio/sample_checks.h"

namespace izwi {

std::vector<float> to_mono(const AudioBuffer& audio) {
  check_audio_buffer(audio, "to_mono");
  const size_t channels = static_cast<size_t>(audio.channels);
  if (channels == 1) return audio.samples;
  std::vector<float> mono(audio.frames());
  for (size_t f = 0; f < mono.size(); ++f) {
    float sum = 0.0f;
    for (size_t c = 0; c < channels; ++c) sum += audio.samples[f * channels + c];
    mono[f] = sum / static_cast<float>(channels);
  }
  return mono;
}

}  // namespace izwi
