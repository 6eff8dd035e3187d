// Fuzz target: any voice file either loads a non-empty voice of finite values that saves and loads
// back unchanged, or raises izwi::Error. Nothing else may happen.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_support.h"
#include "izwi/errors.h"
#include "izwi/voice.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = izwi::fuzz::scratch_dir("voice_file");
  izwi::fuzz::write_file(dir + "/voice.json", data, size);
  izwi::Voice voice;
  try {
    voice = izwi::load_voice(dir + "/voice.json");
  } catch (const izwi::Error&) {
    return 0;
  }
  if (voice.empty()) std::abort();
  for (float v : voice.xvector) {
    if (!std::isfinite(v)) std::abort();
  }
  izwi::save_voice(voice, dir + "/again.json");  // a loaded voice always saves
  const izwi::Voice again = izwi::load_voice(dir + "/again.json");
  if (again.xvector != voice.xvector || again.model_type != voice.model_type) std::abort();  // not bit for bit
  return 0;
}
