#include "izwi/engine.h"

namespace izwi {

std::string describe_model_kind(const ModelInfo& info) {
  if (info.produces_audio) return "a text-to-speech model";
  if (info.audio_chat) return "an audio chat model";
  if (info.accepts_audio) return "a speech recognition model";
  return "a text model";
}

}  // namespace izwi
