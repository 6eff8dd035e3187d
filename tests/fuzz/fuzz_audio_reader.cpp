// Fuzz target: any byte string handed to the audio reader either decodes into a consistent
// buffer (positive rate and channels, whole frames, finite samples within the size cap) or
// raises izwi::Error. Nothing else may happen.

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "izwi/audio.h"
#include "izwi/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const izwi::AudioBuffer audio = izwi::read_audio_from_memory(data, size, "fuzz-input");
    if (audio.sample_rate <= 0 || audio.channels <= 0 || audio.frames() == 0 ||
        audio.samples.size() % static_cast<size_t>(audio.channels) != 0 ||
        audio.samples.size() > izwi::kMaxAudioSamples) {
      std::abort();  // accepted an inconsistent file
    }
    for (float v : audio.samples) {
      if (!std::isfinite(v)) std::abort();
    }
  } catch (const izwi::Error&) {
  }
  return 0;
}
