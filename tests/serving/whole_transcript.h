#pragma once
// What a server's transcription of a whole recording must equal: the C++ API's transcript of the
// same mono samples, decoded past the end of the audio as an upload (or a committed item) is.

#include <string>
#include <vector>

#include "izwi/engine.h"

namespace izwi::testing {

Output whole_transcript(const std::string& model_dir, const std::vector<float>& mono, int sample_rate);

}  // namespace izwi::testing
