#include "serving/whole_transcript.h"

namespace izwi::testing {

Output whole_transcript(const std::string& model_dir, const std::vector<float>& mono, int sample_rate) {
  Engine asr(model_dir);
  TranscriptionOptions whole;
  whole.continue_after_audio = true;
  return asr.transcribe(mono, sample_rate, whole);
}

}  // namespace izwi::testing
