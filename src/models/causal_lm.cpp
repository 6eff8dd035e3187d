#include "models/causal_lm.h"

#include <limits>

#include "common/check.h"
#include "io/hf_config.h"

namespace izwi {

ModelSpec base_spec(const std::string& model_type, const JsonFields& config, int64_t vocab_size, int64_t hidden_size,
                    int64_t max_positions) {
  ModelSpec spec;
  spec.model_type = model_type;
  spec.vocab_size = static_cast<int32_t>(vocab_size);
  spec.hidden_size = static_cast<int32_t>(hidden_size);
  spec.max_positions = static_cast<int32_t>(std::min<int64_t>(max_positions, std::numeric_limits<int32_t>::max()));
  spec.eos_token_ids = read_token_ids(config, "eos_token_id");
  const std::vector<int32_t> bos = read_token_ids(config, "bos_token_id");
  if (!bos.empty()) spec.bos_token_id = bos.front();
  return spec;
}

std::vector<StepOutput> CausalLM::sample(const at::Tensor& hidden, const std::vector<SampleRow>& rows,
                                         const ForwardContext& ctx, CacheBuffers&, Sampler& sampler) const {
  std::vector<SamplingState*> states;
  for (const SampleRow& row : rows) states.push_back(row.sampling);
  const std::vector<int32_t> ids = sampler.sample_rows(logits(hidden, ctx), states, *ctx.backend);
  std::vector<StepOutput> outputs(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) outputs[i].token = ids[i];
  return outputs;
}

std::unique_ptr<RequestState> CausalLM::make_transcription_state(const TranscriptionSettings&) const {
  fail(ErrorCode::Unsupported, "model_type '{}' does not take audio input", spec().model_type);
}

std::vector<int32_t> CausalLM::transcription_prompt(const TranscriptionSettings&) const {
  fail(ErrorCode::Unsupported, "model_type '{}' does not take audio input", spec().model_type);
}

SpeechPrompt CausalLM::speech_prompt(const SpeechRequest&, const Tokenizer*) const {
  fail(ErrorCode::Unsupported, "model_type '{}' does not synthesize speech", spec().model_type);
}

SpeechPrompt CausalLM::audio_chat_prompt(const AudioChatRequest&, const Tokenizer*) const {
  fail(ErrorCode::Unsupported, "model_type '{}' does not do audio chat", spec().model_type);
}

Voice CausalLM::create_voice(const std::vector<float>&, int32_t, const VoiceTranscript&, const Tokenizer*) const {
  fail(ErrorCode::Unsupported, "model_type '{}' does not clone voices", spec().model_type);
}

std::vector<std::vector<float>> CausalLM::decode_audio(const std::vector<RequestState*>&,
                                                       const std::vector<int32_t>&) const {
  fail(ErrorCode::Unsupported, "model_type '{}' does not synthesize speech", spec().model_type);
}

}  // namespace izwi
