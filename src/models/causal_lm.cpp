#include "models/causal_lm.h"

#include "common/check.h"

namespace izwi {

std::unique_ptr<StreamingInput> CausalLM::make_streaming_input(const TranscriptionSettings&) const {
  fail(ErrorCode::Unsupported, "model_type '{}' does not take audio input", spec().model_type);
}

std::vector<int32_t> CausalLM::transcription_prompt(const TranscriptionSettings&) const {
  fail(ErrorCode::Unsupported, "model_type '{}' does not take audio input", spec().model_type);
}

}  // namespace izwi
